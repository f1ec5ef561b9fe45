// A voice-command project built against the fake server's route `fake` (model fake/test-model), and what
// such a build wrote: its results' records, its metrics and the warnings of its --json event lines.
import { Project } from "./rig.js";
import { fakeRoute, startFake, type Fake } from "./fake.js";

export const RESULTS = "results/kor-surgical-robot-voice-command/fake_test-model";

/** A new project whose routes.yaml sends route `fake` to a new fake server (both removed after the test).
 *  `routes` writes the registry for the server's URL (fakeRoute's entry by default). */
export async function projectAgainstFake(
  cleaned: { servers: Fake[]; projects: Project[] },
  server: Record<string, unknown>,
  routes: (url: string) => string = (url) => `routes:\n${fakeRoute("fake", url)}`,
): Promise<{ fake: Fake; p: Project }> {
  const fake = await startFake(server);
  cleaned.servers.push(fake);
  const p = new Project();
  cleaned.projects.push(p);
  p.write("routes.yaml", routes(fake.url));
  return { fake, p };
}

/** The records of one JSON-lines file of the build's results (replies.jsonl, items.jsonl). */
export const resultRecords = <T>(p: Project, file: string): T[] =>
  p
    .read(`${RESULTS}/${file}`)
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as T);

/** The build's metrics.json. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- read field by field
export const resultMetrics = (p: Project): any => JSON.parse(p.read(`${RESULTS}/metrics.json`));

/** The warnings among a --json build's event lines (stderr). */
export const buildWarnings = (stderr: string): string[] =>
  stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { type: string; message?: string })
    .filter((e) => e.type === "warning")
    .map((e) => e.message!);

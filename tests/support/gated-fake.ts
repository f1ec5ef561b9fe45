// The fixture task (tests/fixtures/README.md) built against the fake OpenAI-compatible server, its replies
// held at a gate, so that a test can look at a build in its model stage however loaded the machine is.
import { Project, SUMS_SPECS } from "./rig.js";
import { startFake, type Fake } from "./fake.js";

/** A routes file naming the fake as `fake`, with `concurrency` requests at once. */
export const gatedRoutes = (url: string, concurrency: number): string => `routes:
  fake:
    base_url: ${url}
    request:
      thinking_off: { chat_template_kwargs: { enable_thinking: false } }
    concurrency: ${concurrency}
    timeout_s: 600
    retry: { max_attempts: 2, base_ms: 1, max_ms: 5, max_total_s: 1200 }
`;

/** A fake (echo policy) and a project of the fixture task pointed at it, both kept for the cleanup. */
export async function fixtureWithFake(
  cleanup: { servers: Fake[]; projects: Project[] },
  concurrency: number,
): Promise<{ fake: Fake; p: Project }> {
  const fake = await startFake({ policy: "echo" });
  cleanup.servers.push(fake);
  const p = new Project(SUMS_SPECS);
  cleanup.projects.push(p);
  p.write("routes.yaml", gatedRoutes(fake.url, concurrency));
  return { fake, p };
}

/** Resolves once `cond` holds (checked every 20 ms); the test's own timeout bounds it. */
export async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** A gate the fake server's replies wait for (`fake.set({ gate: promise })`). */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

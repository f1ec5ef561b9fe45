// A build --batch killed loses nothing, for each protocol against its fake batch API over real HTTP: a
// second clone sharing the remote collects its batch, no request is submitted twice, and the results are an
// online build's byte for byte. Killed after submitting (the batch's id recorded), or while the provider
// answers its "create batch" (the batch made and paid for, its id never received; the fake holds the
// create's answer until the test has killed the build): the batch was recorded as being made before the
// call, under a label the provider keeps where it keeps one (OpenAI's metadata, Gemini's display name;
// Anthropic's by when and how many), so the second clone finds it among the provider's batches (and `cache
// batches` lists it).
import { afterEach, describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { fakeRoute, startFake } from "../support/fake.js";
import { anthropicRoute, startAnthropicFake } from "../support/fake-anthropic.js";
import { geminiRoute, startGeminiFake } from "../support/fake-gemini.js";
import { cleanUp, remoteEnv, startS3 } from "../support/remote-rig.js";
// @ts-expect-error: a plain ESM script
import { startFakeBatches } from "../../scripts/fake-openai-batch.mjs";
// @ts-expect-error: a plain ESM script
import { startFakeAnthropicBatches } from "../../scripts/fake-anthropic-batch.mjs";

const { projects } = cleanedAfterEach();
afterEach(cleanUp);

interface Server {
  url: string;
  port: number;
  close(): Promise<void>;
}
/** A batch API: how many batches it made, and a promise of the next create it takes. */
interface Batches {
  url: string;
  set(options: Record<string, unknown>): void;
  whenSubmitted(): Promise<void>;
  submitted(): number;
  close(): Promise<void>;
}

interface Protocol {
  route: (url: string) => string;
  model: string;
  env: Record<string, string>;
  online(): Promise<Server>;
  /** The batch API on the online server's port (so the same route, and the same request keys). */
  batches(port: number, online: Server): Promise<Batches>;
}

const ANTHROPIC_KEY = "sk-ant-test-0123456789";
const GEMINI_KEY = "gm-test-key-0123456789";

const PROTOCOLS: Record<string, Protocol> = {
  openai: {
    route: (url) => fakeRoute("fake", url),
    model: "fake/test-model",
    env: {},
    online: () => startFake({ usage: "counted" }),
    async batches(port, online) {
      await online.close();
      const fake = await startFakeBatches({ port, usage: "counted" });
      return { ...fake, submitted: () => fake.stats.submitted };
    },
  },
  anthropic: {
    route: (url) => anthropicRoute("an", url),
    model: "an/claude-test",
    env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY },
    online: () => startAnthropicFake({ policy: "voice-command", apiKey: ANTHROPIC_KEY }),
    async batches(port, online) {
      await online.close();
      const fake = await startFakeAnthropicBatches({ port, policy: "voice-command", apiKey: ANTHROPIC_KEY });
      return { ...fake, submitted: () => fake.stats.submitted };
    },
  },
  gemini: {
    route: (url) => geminiRoute("gm", url),
    model: "gm/gemini-2.5-flash",
    env: { GEMINI_API_KEY: GEMINI_KEY },
    online: () => startGeminiFake({ apiKey: GEMINI_KEY }),
    // The fake Gemini server serves its Batch API beside generateContent.
    batches: async (_port, online) => {
      const fake = online as Awaited<ReturnType<typeof startGeminiFake>> & Omit<Batches, "submitted">;
      const stats = fake.stats as unknown as { batches: { submitted: number } };
      return { ...fake, submitted: () => stats.batches.submitted };
    },
  },
};

const KILLS = ["after submitting", "while the provider makes its batch"] as const;

/** Resolves once the running CLI has written `text` to its stderr. */
function said(run: ReturnType<Project["start"]>, text: string): Promise<void> {
  return new Promise((resolve) => {
    let seen = "";
    run.stderr!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(text)) resolve();
    });
  });
}

describe.each(Object.keys(PROTOCOLS))("%s: a build --batch killed", (name) => {
  const protocol = PROTOCOLS[name]!;
  const project = (url: string) => {
    const p = new Project();
    projects.push(p);
    p.write("routes.yaml", `routes:\n${protocol.route(url)}`);
    return p;
  };
  const args = (extra: string[]) => [
    "build",
    "specs/voice-command.yaml",
    "--model",
    protocol.model,
    "--registry",
    "routes.yaml",
    ...extra,
  ];
  const dir = `results/kor-surgical-robot-voice-command/${protocol.model.replace("/", "_")}`;
  const files = (p: Project) => new Map(readdirSync(p.path(dir)).map((f) => [f, p.read(`${dir}/${f}`)]));

  it.each(KILLS)("killed %s, is collected by a second clone through the remote", async (when) => {
    const online = await protocol.online();
    const reference = project(online.url);
    const built = await reference.run(args([]), protocol.env);
    expect(built.exitCode, built.stderr).toBe(0);
    const batches = await protocol.batches(online.port, online);
    const s3 = await startS3();
    try {
      const env = { ...protocol.env, ...remoteEnv(s3) };
      const creating = when === KILLS[1];
      batches.set({ holdCreate: creating });
      const taken = batches.whenSubmitted();
      const killed = project(batches.url).start(args(["--batch", "--wait"]), env);
      await Promise.race([creating ? taken : said(killed, "submitted in batches"), killed]);
      killed.kill("SIGKILL");
      await killed;
      expect(batches.submitted()).toBe(1);
      batches.set({ holdCreate: false });

      const second = project(batches.url);
      if (creating) {
        // Listed before any build found it: found at the provider by what the remote recorded.
        const list = ["cache", "batches", "--registry", "routes.yaml", "--json"];
        const listed = await second.run(list, env);
        expect(listed.exitCode, listed.stderr).toBe(0);
        expect(JSON.parse(listed.stdout).batches).toMatchObject([
          { open: true, recorded: ["remote: being made"] },
        ]);
      }
      const collected = await second.run(args(["--batch", "--wait"]), env);
      expect(collected.exitCode, collected.stderr).toBe(0);
      if (creating) expect(collected.stderr).toMatch(/batch \S+ found at the provider/);
      expect(batches.submitted()).toBe(1);
      expect(files(second)).toEqual(files(reference));
    } finally {
      await batches.close();
    }
  });
});

describe("openai: a build killed before the provider made its batch", () => {
  it("has its requests submitted by the next build, once", async () => {
    const protocol = PROTOCOLS.openai!;
    const online = await protocol.online();
    const p = new Project();
    projects.push(p);
    p.write("routes.yaml", `routes:\n${protocol.route(online.url)}`);
    const batches = await protocol.batches(online.port, online);
    const s3 = await startS3();
    try {
      const env = remoteEnv(s3);
      batches.set({ holdCreate: "unmade" });
      const taken = batches.whenSubmitted();
      const killed = p.start(Project.fakeBuildArgs(["--batch", "--wait"]), env);
      await Promise.race([taken, killed]);
      killed.kill("SIGKILL");
      await killed;
      expect(batches.submitted()).toBe(0);
      batches.set({ holdCreate: false });
      const next = await p.buildAgainstFake(["--batch", "--wait"], env);
      expect(next.exitCode, next.stderr).toBe(0);
      expect(next.stderr).toMatch(/no batch found for \d+ requests a stopped build was submitting/);
      expect(batches.submitted()).toBe(1);
    } finally {
      await batches.close();
    }
  });
});

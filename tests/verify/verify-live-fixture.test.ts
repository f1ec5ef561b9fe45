// verify --live compares verdicts as the task declares them (its `compare`: verdicts, groups `by` a meta
// field, left-out items), never by names the generic code knows; a task without a declaration gets every
// boolean verdict of its items in one group. On the fixture task, against the fake server over real HTTP:
// the published run answers every sum right, the live server gets one wrong.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Install, Project, SUMS_SPECS } from "../support/rig.js";
import { fakeRoute, startFake, type Fake } from "../support/fake.js";

const RESULTS = "results/fixture-sums/fake_m";
const WRONG = "hard/q6"; // 6 + 5, answered 12 live

/** A fake model that adds the two numbers of the prompt; `wrong` ones it gets one too high. */
const adder =
  (wrong: boolean) =>
  (body: { messages: { role: string; content: string }[] }): string => {
    const user = body.messages.find((m) => m.role === "user")!.content;
    const [, a, b] = /What is (-?\d+) \+ (-?\d+)\?/.exec(user)!;
    const sum = Number(a) + Number(b);
    return String(wrong && a === "6" && b === "5" ? sum + 1 : sum);
  };

interface LiveJson {
  ok: boolean;
  live: {
    compare: { declared: boolean; by: string | null; headline: string | null };
    verdicts: {
      key: string;
      group: string;
      n: number;
      changed: number;
      to_false: number;
      items: string[];
    }[];
    metrics: { metric: string; live: number | null; published: number | null }[];
  };
}

describe("verify --live on the fixture task", () => {
  let published: Fake, live: Fake;
  let a: Project, v: Project;
  const verify = (json: boolean, bin?: string) =>
    v.run(
      ["verify", a.path("b.tar.gz"), "--live", "--registry", "routes.yaml", ...(json ? ["--json"] : [])],
      {},
      bin,
    );
  beforeAll(async () => {
    published = await startFake({ policy: adder(false) });
    live = await startFake({ policy: adder(true) });
    a = new Project(SUMS_SPECS);
    v = new Project(false);
    a.write("routes.yaml", `routes:\n${fakeRoute("fake", published.url)}`);
    v.write("routes.yaml", `routes:\n${fakeRoute("fake", live.url)}`);
    const built = await a.run([
      "build",
      "specs/sums.yaml",
      "--model",
      "fake/m",
      "--registry",
      "routes.yaml",
    ]);
    expect(built.exitCode, built.stderr).toBe(0);
    const exported = await a.run(["export", RESULTS, "-o", "b.tar.gz"]);
    expect(exported.exitCode, exported.stderr).toBe(0);
  });
  afterAll(async () => {
    await published.close();
    await live.close();
    a.remove();
    v.remove();
  });

  it("reports the declared verdict per declared group, naming the one item that changed", async () => {
    const r = await verify(true);
    expect(r.exitCode, r.stderr).toBe(0); // a changed verdict is information, not a failure
    const out = JSON.parse(r.stdout) as LiveJson;
    expect(out.live.compare).toMatchObject({ declared: true, by: "subset", headline: "correct" });
    expect(
      out.live.verdicts.map(({ key, group, n, changed, items }) => ({ key, group, n, changed, items })),
    ).toEqual([
      { key: "correct", group: "plain", n: 4, changed: 0, items: [] },
      { key: "correct", group: "hard", n: 2, changed: 1, items: [WRONG] },
    ]);
    const accuracy = out.live.metrics.find((m) => m.metric === "accuracy")!;
    expect(accuracy).toMatchObject({ published: 1, live: 5 / 6 });

    const text = await verify(false);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      "verdicts as the task compares them, by subset: headline correct (correct sum):",
    );
    expect(text.stdout).toContain("correct on plain: 0 of 4 verdicts differed (0 to true, 0 to false)");
    expect(text.stdout).toContain("correct on hard: 1 of 2 verdicts differed (0 to true, 1 to false)");
  });

  it("a task that declares no comparison: every boolean verdict of its items, in one group", async () => {
    const install = new Install();
    try {
      install.edit("tests/fixtures/sums/task/index.ts", (t) => t.replace(/\n {2}compare: \{[^\n]*\},/, ""));
      await install.compile();
      const r = await verify(true, install.bin);
      expect(r.exitCode, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as LiveJson;
      expect(out.live.compare).toMatchObject({ declared: false, by: null, headline: "correct" });
      expect(
        out.live.verdicts.map(({ key, group, n, changed, items }) => ({ key, group, n, changed, items })),
      ).toEqual([{ key: "correct", group: "all", n: 6, changed: 1, items: [WRONG] }]);
      const text = await verify(false, install.bin);
      expect(text.stdout).toContain("the task declares no comparison: every boolean verdict of its items");
      expect(text.stdout).toContain("correct on all: 1 of 6 verdicts differed (0 to true, 1 to false)");
    } finally {
      install.remove();
    }
  });
});

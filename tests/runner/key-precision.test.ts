// An edit reruns exactly the stages whose code it changes, and those whose inputs then change:
// each stage is keyed on the task part it calls (src/runner/code/task-parts.ts). Through the CLI, on a copy
// of medbench whose task sources are edited and compiled again, for voice-command and the sums fixture; the
// cases of one task run in order, each against the build the one before left.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Install, Project, SUMS_SPECS } from "../support/rig.js";

interface Case {
  task: string; // the task folder in the install
  spec: string;
  specs: true | string; // Project's specs: the repo's or a fixture's
  parser: [string, string]; // an edit of the parser that changes what it parses
  scorer: [string, string]; // an edit of the scorer that changes its output
  helper: string; // the prompt-building helper edited
  helperChange: [string, string]; // an edit of it that changes the requests
}

const CASES: Case[] = [
  {
    task: "tasks/voice-command",
    spec: "specs/voice-command.yaml",
    specs: true,
    parser: ["return { ok: true, value };", "return { ok: false, value };"],
    scorer: ["minus clean (pp)`", "minus clean (percentage points)`"],
    helper: "export function systemPrompt(",
    helperChange: ["  }).trimEnd();", '  }).trimEnd() + "\\n";'],
  },
  {
    task: "tests/fixtures/sums/task",
    spec: "specs/sums.yaml",
    specs: SUMS_SPECS,
    parser: ["{ ok: true, value: Number(m[0]) }", "{ ok: true, value: Number(m[0]) + 1 }"],
    scorer: ['label: "correct sums"', 'label: "correct sums (edited)"'],
    helper: "export function rows(",
    helperChange: [".filter((l) => l.trim())", ".filter((l) => l.trim() && !l.includes('\"q1\"'))"],
  },
];

for (const c of CASES)
  describe(`key precision: ${c.task}`, () => {
    let install: Install;
    let p: Project;
    const file = (name: string) => `${c.task}/${name}`;
    const build = async () => (await p.buildSpec(c.spec, [], {}, install.bin)).status;
    const editAndCompile = async (name: string, from: string, to: string) => {
      install.edit(file(name), (t) => t.replace(from, to));
      await install.compile();
    };
    beforeAll(async () => {
      install = new Install();
      p = new Project(c.specs);
      await p.buildSpec(c.spec, [], {}, install.bin);
    });
    afterAll(() => {
      install.remove();
      p.remove();
    });

    it("editing the parser reruns parse, score and bootstrap; status names the file", async () => {
      await editAndCompile("parser.ts", ...c.parser);
      const status = await p.run(["status", c.spec], {}, install.bin);
      expect(status.stdout).toMatch(
        new RegExp(`stale\\s+parse[^\\n]*\\n\\s+code changed: ${file("parser.ts")}\\n`),
      );
      expect(status.stdout).toMatch(/stale\s+score[^\n]*\n\s+its input from stage parse may change/);
      expect(status.stdout).not.toMatch(/code changed: .*(prompts|scorer|baselines)\.ts/);
      const r = await p.run(["build", c.spec], {}, install.bin);
      expect(r.stdout).toContain(`run   parse (parse): code changed: ${file("parser.ts")}`);
      expect(await build()).toEqual({
        download: "fresh",
        prompts: "fresh",
        model: "fresh",
        parse: "fresh",
        score: "fresh",
        bootstrap: "fresh",
      });
      // The build above ran them: the lock records what they made.
      expect(r.stdout).toMatch(/run\s+score \(score\): input parsed changed/);
      expect(r.stdout).toMatch(/run\s+bootstrap \(bootstrap\): input score changed/);
      expect(r.stdout).not.toMatch(/run\s+(download|prompts|model) /);
    });

    it("editing the scorer reruns score and bootstrap", async () => {
      await editAndCompile("scorer.ts", ...c.scorer);
      expect(await build()).toEqual({
        download: "fresh",
        prompts: "fresh",
        model: "fresh",
        parse: "fresh",
        score: "ran",
        bootstrap: "ran",
      });
    });

    it("a prompt helper edited reruns prompts; the model stays fresh while requests match", async () => {
      await editAndCompile("prompts.ts", c.helper, `// an edit that changes no request\n${c.helper}`);
      expect(await build()).toEqual({
        download: "fresh",
        prompts: "ran",
        model: "fresh",
        parse: "fresh",
        score: "fresh",
        bootstrap: "fresh",
      });
    });

    it("editing a prompt-building helper so that requests change reruns the model", async () => {
      await editAndCompile("prompts.ts", ...c.helperChange);
      expect(await build()).toMatchObject({ download: "fresh", prompts: "ran", model: "ran" });
    });
  });

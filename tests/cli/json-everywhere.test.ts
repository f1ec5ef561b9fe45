// Every command takes --json and then prints one JSON object on stdout (README: "Every command takes ...").
import { describe, expect, it } from "vitest";
import { Project } from "../support/rig.js";

const oneObject = (stdout: string) => {
  const lines = stdout.trim().split("\n");
  expect(lines.length).toBe(1);
  const v = JSON.parse(lines[0]!) as unknown;
  expect(v !== null && typeof v === "object" && !Array.isArray(v)).toBe(true);
  return v as Record<string, unknown>;
};

describe("--json on every command", () => {
  it("stats ci, stats paired, report and export print one JSON object", async () => {
    const p = new Project();
    const rows = (k: number) =>
      Array.from({ length: 20 }, (_, i) =>
        JSON.stringify({ id: `i${i}`, g: `g${i % 5}`, v: (i * k) % 3 === 0 ? 1 : 0 }),
      ).join("\n") + "\n";
    p.write("a.jsonl", rows(1));
    p.write("b.jsonl", rows(2));
    const ci = await p.run([
      "stats",
      "ci",
      "--input",
      "a.jsonl",
      "--value",
      "v",
      "--cluster",
      "g",
      "--json",
    ]);
    expect(ci.exitCode, ci.stderr).toBe(0);
    const plain = await p.run(["stats", "ci", "--input", "a.jsonl", "--value", "v", "--cluster", "g"]);
    expect(oneObject(ci.stdout)).toEqual(oneObject(plain.stdout));
    const paired = await p.run([
      "stats",
      "paired",
      "--a",
      "a.jsonl",
      "--b",
      "b.jsonl",
      "--value",
      "v",
      "--id",
      "id",
      "--json",
    ]);
    expect(paired.exitCode, paired.stderr).toBe(0);
    oneObject(paired.stdout);
    const build = await p.run(["build", "specs/voice-command.yaml", "--quiet"]);
    expect(build.exitCode, build.stderr).toBe(0);
    const rep = await p.run(["report", "-o", "r.html", "--json"]);
    expect(rep.exitCode, rep.stderr).toBe(0);
    expect(oneObject(rep.stdout)).toMatchObject({ report: expect.stringContaining("r.html"), runs: 1 });
    expect(p.exists("r.html")).toBe(true);
    const dir = "results/kor-surgical-robot-voice-command/medbench_prior";
    const ex = await p.run(["export", dir, "-o", "r.tar.gz", "--json"]);
    expect(ex.exitCode, ex.stderr).toBe(0);
    expect(oneObject(ex.stdout)).toEqual({ bundle: expect.stringContaining("r.tar.gz") });
    p.remove();
  });

  it("init and new-task print one JSON object", async () => {
    const p = new Project(false);
    const init = await p.run(["init", "--json"]);
    expect(init.exitCode, init.stderr).toBe(0);
    expect(oneObject(init.stdout)).toEqual({
      gitignore_added: null,
      written: ["routes.yaml", "README.md"],
      kept: [],
      copied: [],
    });
    const task = await p.run(["new-task", "my-task", "--json"]);
    expect(task.exitCode, task.stderr).toBe(0);
    expect(oneObject(task.stdout).written).toContain("tasks/my-task/index.ts");
    p.remove();
  });
});

// The files new-task and init write come from src/cli/templates/, read from the install root: each is
// shipped (package.json "files"), and each placeholder is filled with the text given, taken as is.
import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../support/helpers.js";
import { filledTemplate } from "../../src/cli/template-files.js";
import { taskSources, taskSpec } from "../../src/cli/task-template.js";
import { PROJECT_README, ROUTES_TEMPLATE } from "../../src/cli/project-template.js";

describe("templates", () => {
  it("ships src/cli/templates with the package", () => {
    const files = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { files: string[] })
      .files;
    expect(files).toContain("src");
    const folders = readdirSync(join(REPO, "src/cli/templates")).sort();
    expect(folders).toEqual(["project", "task"]);
  });

  it("fills every placeholder of a new task, and the name as given", () => {
    const sources = taskSources("my-task");
    expect(Object.keys(sources)).toEqual([
      "index.ts",
      "prompts.ts",
      "parser.ts",
      "scorer.ts",
      "baselines.ts",
    ]);
    for (const text of Object.values(sources)) expect(text).not.toContain("{{");
    expect(sources["index.ts"]).toContain("// my-task: a task of this repository");
    const spec = taskSpec("$&", "ab".repeat(32));
    expect(spec).not.toContain("{{");
    expect(spec).toContain("slug: $&\n");
    expect(spec).toContain(`items.jsonl: ${"ab".repeat(32)}\n`);
  });

  it("leaves a placeholder it is not given", () => {
    expect(filledTemplate("task/spec.yaml.template", { name: "demo" })).toContain("{{sampleSha256}}");
  });

  it("reads init's files whole", () => {
    expect(ROUTES_TEMPLATE.startsWith("# Model routes for this project")).toBe(true);
    expect(PROJECT_README.startsWith("# Benchmarks built with medbench\n")).toBe(true);
  });
});

// medbench new-task NAME: a task of the user's own repository to start from (src/cli/task-template.ts).
import { mkdirSync, writeFileSync } from "../../util/builtins.js";
import { dirname, join, resolve } from "node:path";
import { sha256Hex } from "../../hash/sha256.js";
import { parse } from "../args.js";
import { UsageError } from "../../errors.js";
import { usageError, type Command } from "../command.js";
import { builtInSpecNames, optionsOf } from "../options.js";
import { makeRoot, placeProblem, rootProblem, shownPath, writing } from "../new-files.js";
import { SAMPLE_ITEMS, taskSpec, taskSources, USER_PROMPT } from "../task-template.js";

export const command: Command = {
  help: `usage: medbench new-task NAME [--project DIR] [--json]

Writes a task that builds offline, on a two-item sample, with its built-in baseline medbench/reference:
  specs/NAME.yaml               the spec (published part and stage graph; the sample pinned by sha256)
  specs/NAME/sample/items.jsonl the sample release
  specs/NAME/prompts/user.txt   the prompt template
  tasks/NAME/*.ts               prompts, parser, scorer, baselines (compiled by medbench when built)
It never overwrites a file. NAME: lower-case letters, digits and dashes, at most 64.

examples:
  npx medbench new-task my-task
  npx medbench build specs/my-task.yaml`,
  run,
};

/** A task's name is a file name several times over (specs/NAME.yaml, results/NAME/…), and a slug people
 *  read: well inside any file system's limit of 255 bytes a name. */
const MAX_NAME = 64;

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, optionsOf("project", "json"), "new-task");
  if (positionals.length !== 1) throw usageError(command, "new-task takes one NAME");
  const name = positionals[0]!;
  if (!/^[a-z][a-z0-9-]*$/.test(name) || name.length > MAX_NAME)
    throw new UsageError(
      `task name ${JSON.stringify(name.length > MAX_NAME ? `${name.slice(0, 20)}…` : name)}: ` +
        `use lower-case letters, digits and dashes, at most ${MAX_NAME} of them` +
        (name.length > MAX_NAME ? ` (it has ${name.length})` : ""),
    );
  if (builtInSpecNames().includes(name))
    throw new UsageError(
      `task name ${name} is the name of a task medbench ships (medbench build ${name} builds it): choose ` +
        `another name, or copy the built-in spec to edit it (medbench init --task ${name})`,
    );
  const root = resolve((values.project as string | undefined) ?? ".");
  const files: [string, string][] = [
    [`specs/${name}.yaml`, taskSpec(name, sha256Hex(Buffer.from(SAMPLE_ITEMS)))],
    [`specs/${name}/sample/items.jsonl`, SAMPLE_ITEMS],
    [`specs/${name}/prompts/user.txt`, USER_PROMPT],
    ...Object.entries(taskSources(name)).map(([file, text]): [string, string] => [
      `tasks/${name}/${file}`,
      text,
    ]),
  ];
  const problems = [
    ...new Set([rootProblem(root), ...files.map(([file]) => placeProblem(root, file))]),
  ].filter((problem): problem is string => problem !== null);
  if (problems.length)
    throw new UsageError(
      `new-task writes nothing over an existing file or through a link: ${problems.join("; ")}\n` +
        "  fix: choose another name, or move them aside",
    );
  makeRoot(root);
  for (const [rel, text] of files)
    writing(shownPath(root, rel), () => {
      mkdirSync(dirname(join(root, rel)), { recursive: true });
      writeFileSync(join(root, rel), text, { flag: "wx" });
    });
  if (values.json) {
    process.stdout.write(JSON.stringify({ written: files.map(([file]) => file) }) + "\n");
    return 0;
  }
  process.stdout.write(
    files.map(([file]) => `wrote ${file}`).join("\n") + `\n\nnext: npx medbench build specs/${name}.yaml\n`,
  );
  return 0;
}

// medbench init: what a benchmark author's own repository needs to build medbench tasks, written once.
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "../../util/builtins.js";
import { dirname, join, resolve } from "node:path";
import { installRoot } from "../../util/paths.js";
import { parse } from "../args.js";
import { UsageError } from "../../errors.js";
import { usageError, type Command } from "../command.js";
import { builtInSpecNames } from "../options.js";
import { makeRoot, placeProblem, rootProblem, shownPath, writing } from "../new-files.js";
import { GITIGNORE, PROJECT_README, ROUTES_TEMPLATE } from "../project-template.js";

export const command: Command = {
  help: `usage: medbench init [--task NAME] [--project DIR] [--json]

Writes, in the current folder (or --project DIR), what a repository needs to build medbench tasks:
  .gitignore    cache/ and results/ (lines added to an existing .gitignore, none removed)
  routes.yaml   a route registry with commented routes for vLLM, SGLang, Ollama, OpenRouter and OpenAI
  README.md     how to build, add a task and publish a result here
It never overwrites a file: when routes.yaml or README.md exists, it names it and writes nothing.

  --task NAME   copy a built-in task's spec (specs/NAME.yaml and specs/NAME/) here to edit; in a folder
                already set up, the files above that exist are kept (only the spec's copy must be new)
  --project DIR the folder to set up (default: the current directory)
  --json        one JSON line: what was written, kept and copied

examples:
  npx medbench init
  npx medbench build voice-command          # a built-in task, by name, nothing copied
  npx medbench init --task voice-command    # or its spec copied to specs/ to edit`,
  run,
};

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      task: { type: "string" },
      project: { type: "string" },
      json: { type: "boolean" },
    },
    "init",
  );
  if (positionals.length)
    throw usageError(command, `init takes no arguments (got ${positionals.join(" ")})`);
  const root = resolve((values.project as string | undefined) ?? ".");
  const task = values.task as string | undefined;
  const names = builtInSpecNames();
  if (task !== undefined && !names.includes(task))
    throw new UsageError(`--task ${task}: medbench ships no such task; its tasks: ${names.join(", ")}`);
  const writes: [string, string][] = [
    ["routes.yaml", ROUTES_TEMPLATE],
    ["README.md", PROJECT_README],
  ];
  const copies = task ? [`specs/${task}.yaml`, `specs/${task}`] : [];
  // Adding a task's spec to a folder already set up keeps its files; a plain init refuses them.
  const kept = task ? writes.filter(([file]) => existsSync(join(root, file))).map(([file]) => file) : [];
  refuseUnsafePlaces(root, [...writes.map(([file]) => file), ...copies], kept);
  makeRoot(root);
  const at = (file: string) => shownPath(root, file);
  const added = writing(at(".gitignore"), () => addIgnores(join(root, ".gitignore")));
  for (const [file, text] of writes)
    if (!kept.includes(file)) writing(at(file), () => writeFileSync(join(root, file), text, { flag: "wx" }));
  for (const rel of copies) writing(at(rel), () => copyFromInstall(root, rel));
  if (task) resultsApart(join(root, `specs/${task}.yaml`), task);
  if (values.json) {
    const written = writes.filter(([file]) => !kept.includes(file)).map(([file]) => file);
    process.stdout.write(JSON.stringify({ gitignore_added: added, written, kept, copied: copies }) + "\n");
    return 0;
  }
  const lines = [
    added === null
      ? "wrote .gitignore"
      : `.gitignore: added ${added.join(", ") || "nothing (already there)"}`,
    ...writes.map(([file]) => (kept.includes(file) ? `kept ${file}` : `wrote ${file}`)),
    ...copies.map((file) => `copied ${file}`),
    "",
    task
      ? `next: npx medbench build specs/${task}.yaml   (README.md says more)`
      : `next: npx medbench build NAME (a built-in task: ${names.join(", ")}), ` +
        "or npx medbench new-task NAME (README.md says more)",
  ];
  process.stdout.write(lines.join("\n") + "\n");
  return 0;
}

/** Refuses, before anything is written, a place behind a link or not a plain file, and an existing file
 *  (but those `kept`). `files`: the files and folders init writes, relative to `root`. */
function refuseUnsafePlaces(root: string, files: string[], kept: string[]): void {
  const taken = files.filter((file) => placeProblem(root, file) && !kept.includes(file));
  const unsafe = [
    ...new Set([
      rootProblem(root),
      placeProblem(root, ".gitignore", true),
      ...files.map((file) => placeProblem(root, file)),
    ]),
  ].filter((problem): problem is string => problem !== null && !/ exists$/.test(problem));
  if (unsafe.length)
    throw new UsageError(
      `init writes nothing through a link or over what is not a plain file: ${unsafe.join("; ")}\n` +
        "  fix: move them aside (or run init in a new folder), then run init again",
    );
  if (taken.length)
    throw new UsageError(
      `init writes nothing over an existing file, and ${taken.join(", ")} ` +
        `${taken.length === 1 ? "exists" : "exist"} in ${root}\n` +
        "  fix: move them aside (or run init in a new folder), then run init again",
    );
}

/** Copies a built-in task's spec file or folder (`rel`) from the install root into the project. */
function copyFromInstall(root: string, rel: string): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  cpSync(join(installRoot(), rel), join(root, rel), {
    recursive: true,
    errorOnExist: true,
    force: false,
  });
}

/** The copy's results go to a folder of their own (results/<slug>/project/…): the built-in spec, built by
 *  name, keeps its folder, so both build side by side (a model's folder always holds `_`, never this
 *  one). */
function resultsApart(file: string, task: string): void {
  const text = readFileSync(file, "utf8");
  const apart = text.replace(
    /^( {2})dir: results\/\{slug\}\//m,
    `$1# apart from the built-in spec's results (medbench build ${task}): this copy is yours to edit\n` +
      "$1dir: results/{slug}/project/",
  );
  writeFileSync(file, apart);
}

/** Writes .gitignore, or adds to it the lines it lacks; returns those added (null when it was new). */
function addIgnores(file: string): string[] | null {
  if (!existsSync(file)) {
    writeFileSync(file, GITIGNORE.join("\n") + "\n", { flag: "wx" });
    return null;
  }
  const text = readFileSync(file, "utf8");
  const have = new Set(text.split("\n").map((line) => line.trim()));
  const missing = GITIGNORE.filter((line) => !have.has(line) && !line.startsWith("#"));
  if (missing.length)
    writeFileSync(file, `${text}${text === "" || text.endsWith("\n") ? "" : "\n"}${missing.join("\n")}\n`);
  return missing;
}

// The commands, in the order the main help lists them, with their line of the main help: the main help
// loads no command module (a command's module loads when it runs or prints its own --help).
import type { Command } from "../command.js";

type Loader = () => Promise<{ command: Command }>;

export interface CommandEntry {
  /** What follows `medbench` in the main help, e.g. "build SPEC". */
  synopsis: string;
  /** One line for the main help. */
  summary: string;
  load: Loader;
}

export const COMMANDS: ReadonlyMap<string, CommandEntry> = new Map<string, CommandEntry>([
  [
    "build",
    {
      synopsis: "build SPEC",
      summary: "run the stages whose inputs changed; write results and medbench.lock",
      load: () => import("./build.js"),
    },
  ],
  [
    "status",
    {
      synopsis: "status SPEC",
      summary: "every stage: fresh, stale (and why) or never built",
      load: () => import("./status.js"),
    },
  ],
  [
    "hash",
    {
      synopsis: "hash FILE",
      summary: "the spec_hash of a spec file or a medbench.kr task document",
      load: () => import("./hash.js"),
    },
  ],
  [
    "diff",
    {
      synopsis: "diff A B",
      summary: "two versions of a spec (files or REV:path): hashes, changed fields, invalidated stages",
      load: () => import("./diff.js"),
    },
  ],
  [
    "stats",
    {
      synopsis: "stats ci|paired",
      summary: "the interval procedures on JSONL files (as scripts/reference/stats_ref.py)",
      load: () => import("./stats.js"),
    },
  ],
  [
    "compare",
    {
      synopsis: "compare RUN_A RUN_B",
      summary: "paired comparison of two full runs of one task (A - B, bootstrap interval, McNemar p)",
      load: () => import("./compare.js"),
    },
  ],
  [
    "compare-voice-command",
    {
      synopsis: "compare-voice-command RUN_A RUN_B",
      summary: "paired comparison of two voice-command runs (medbench compare, as the document names it)",
      load: () => import("./compare-voice-command.js"),
    },
  ],
  [
    "export",
    {
      synopsis: "export RESULT -o F.tar.gz",
      summary: "pack a result with its spec, records and outputs (no data, no secret)",
      load: () => import("./export.js"),
    },
  ],
  [
    "verify",
    {
      synopsis: "verify BUNDLE|DIR [--live]",
      summary: "check a published result by replaying it (and, live, by re-sending it)",
      load: () => import("./verify.js"),
    },
  ],
  [
    "report",
    {
      synopsis: "report [SPEC...] -o F.html",
      summary: "one offline HTML page with every run's metrics, intervals and audit facts",
      load: () => import("./report.js"),
    },
  ],
  [
    "check",
    {
      synopsis: "check SPEC",
      summary:
        "the task's check over its roster of runs: each criterion, its numbers, pass / fail / incomplete",
      load: () => import("./check.js"),
    },
  ],
  [
    "cache",
    {
      synopsis: "cache status|push|pull|gc",
      summary: "the local cache and the shared remote: counts, copy across, collect what no build needs",
      load: () => import("./cache.js"),
    },
  ],
  [
    "init",
    {
      synopsis: "init",
      summary: "set up this folder for medbench: .gitignore, a routes template, a README",
      load: () => import("./init.js"),
    },
  ],
  [
    "new-task",
    {
      synopsis: "new-task NAME",
      summary: "scaffold a task of this repository: specs/NAME.yaml and tasks/NAME/",
      load: () => import("./new-task.js"),
    },
  ],
]);

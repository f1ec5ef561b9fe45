// The commands, in the order the main help lists them. Each module loads only when its command runs.
import type { Command } from "../command.js";

type Loader = () => Promise<{ command: Command }>;

export const COMMANDS: ReadonlyMap<string, Loader> = new Map<string, Loader>([
  ["build", () => import("./build.js")],
  ["status", () => import("./status.js")],
  ["hash", () => import("./hash.js")],
  ["diff", () => import("./diff.js")],
  ["stats", () => import("./stats.js")],
  ["compare", () => import("./compare.js")],
  ["compare-voice-command", () => import("./compare-voice-command.js")],
  ["export", () => import("./export.js")],
  ["verify", () => import("./verify.js")],
  ["report", () => import("./report.js")],
  ["check", () => import("./check.js")],
  ["cache", () => import("./cache.js")],
  ["init", () => import("./init.js")],
  ["new-task", () => import("./new-task.js")],
]);

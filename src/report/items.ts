// The item view's files beside the report: `<page>.items/<run>/` for every run (item-pages.ts), written in a
// temp folder and renamed into place whole, so that a reader sees the old folder or the new one. A folder of
// that name that this command did not write (no marker file in it) is never replaced.
import { existsSync, renameSync, rmSync, writeFileSync } from "../util/builtins.js";
import { basename, dirname, join } from "node:path";
import { sha256Hex } from "../hash/sha256.js";
import { UsageError } from "../errors.js";
import { tempName } from "../util/fsutil.js";
import { runRecords } from "./item-records.js";
import { writeRunPages } from "./item-pages.js";

const MARKER = ".medbench-report-items";

/** What the page knows of a run's items: where its files are (relative to the page) and what is left out. */
export interface RunItems {
  folder: string;
  count: number;
  pages: number;
  /** Why request and reply text is not on the page (the task's private release), or null. */
  withheld: string | null;
}

/** The items folder of a report file: report.html → report.items. */
export const itemsFolderOf = (page: string): string =>
  join(dirname(page), basename(page).replace(/\.html?$/i, "") + ".items");

/** A run's folder name: readable, and unique by the hash of its results folder. */
const runName = (dir: string) =>
  dir.replace(/^results\//, "").replace(/[^A-Za-z0-9._-]+/g, "_") + "-" + sha256Hex(dir).slice(0, 8);

/** Refuses to replace a folder of that name that this command did not write. */
export function checkItemsFolder(page: string): void {
  const folder = itemsFolderOf(page);
  if (existsSync(folder) && !existsSync(join(folder, MARKER)))
    throw new UsageError(
      `${folder} exists and is not a report's items folder: the report writes its items there; ` +
        "move it away or write the report under another name (-o)",
    );
}

interface TaskRuns {
  runs: { dir: string; items?: RunItems }[];
  privateRelease: { why: string; withhold: string[] } | null;
}

/** Writes every run's item files and records on each run where they are. */
export function writeItems(tasks: TaskRuns[], page: string, root: string): void {
  checkItemsFolder(page);
  const folder = itemsFolderOf(page);
  const temp = tempName(dirname(folder));
  try {
    for (const task of tasks) {
      const withhold = new Set(task.privateRelease?.withhold ?? []);
      for (const run of task.runs) {
        const name = runName(run.dir);
        const written = writeRunPages(join(temp, name), name, runRecords(root, run.dir), withhold);
        run.items = {
          folder: `${basename(folder)}/${name}`,
          ...written,
          withheld: task.privateRelease ? task.privateRelease.why : null,
        };
      }
    }
    writeFileSync(join(temp, MARKER), "written by medbench report: replaced whole by the next report\n");
    const old = existsSync(folder) ? tempName(dirname(folder)) : null;
    if (old) renameSync(folder, old);
    renameSync(temp, folder);
    if (old) rmSync(old, { recursive: true, force: true });
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

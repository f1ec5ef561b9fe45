// Where a command may write its `-o` file (export's bundle, report's page): one policy for all. A new file
// in an existing folder, or an earlier file of the same kind (one this command wrote), which it replaces;
// never a folder, a link, any other existing file (medbench.lock, a spec, README.md), nor a file inside a
// results folder, which the next build would refuse to replace (docs/hardening.md, on what medbench owns).
import { closeSync, lstatSync, openSync, readSync, statSync } from "../util/builtins.js";
import { constants, gunzipSync } from "node:zlib";
import { dirname, relative, resolve, sep } from "node:path";
import { RESULTS_ROOT } from "../specfile/results-dir.js";
import { isResultsFolder } from "../runner/results/ownership.js";
import { UsageError } from "../errors.js";

/** What a command writes with -o: its name, an example file name, and how to recognise an earlier one. */
export interface OutputKind {
  what: string;
  example: string;
  /** Whether the first bytes of an existing file are those of a file this command wrote. */
  isOurs(head: Buffer): boolean;
}

export const BUNDLE_OUTPUT: OutputKind = {
  what: "bundle",
  example: "result.tar.gz",
  isOurs: isBundle,
};

/** Whether a file's first bytes are those of a bundle export wrote: gzip, whose tar starts with the member
 *  bundle.json (export packs its members in name order, and no other member sorts before it). A gzip file of
 *  anyone else (a backup, a tarball) is not one. */
function isBundle(head: Buffer): boolean {
  if (head[0] !== 0x1f || head[1] !== 0x8b) return false;
  let tar: Buffer;
  try {
    // The head is cut mid-stream: a sync flush inflates what it holds instead of failing on the end.
    tar = gunzipSync(head, { finishFlush: constants.Z_SYNC_FLUSH });
  } catch {
    return false;
  }
  const name = "bundle.json";
  return (
    tar.length >= 513 &&
    tar.toString("latin1", 0, name.length + 1) === `${name}\0` &&
    tar.toString("latin1", 257, 262) === "ustar" &&
    tar[512] === 0x7b // the member's first byte: `{`
  );
}

export const REPORT_OUTPUT: OutputKind = {
  what: "report",
  example: "report.html",
  isOurs: (head) =>
    head.toString("utf8").startsWith("<!doctype html>") &&
    head.toString("utf8").includes("<title>medbench report</title>"),
};

function headOf(path: string): Buffer {
  const head = Buffer.alloc(16384); // a bundle's head: enough gzip to inflate its first tar header
  const fd = openSync(path, "r");
  try {
    return head.subarray(0, readSync(fd, head, 0, head.length, 0));
  } finally {
    closeSync(fd);
  }
}

/** Refuses an -o that would destroy or hide what the command did not write; `path` as the command writes it,
 *  `output` as the user gave it, `root` the project's. */
export function checkOutput(output: string, path: string, kind: OutputKind, root: string): void {
  const folder = dirname(resolve(path));
  if (!statSync(folder, { throwIfNoEntry: false })?.isDirectory())
    throw new UsageError(`-o ${output}: the folder ${dirname(output)} does not exist (create it first)`);
  const results = resolve(root, RESULTS_ROOT);
  for (let dir = folder; dir.startsWith(results + sep); dir = dirname(dir))
    if (isResultsFolder(dir))
      throw new UsageError(
        `-o ${output} is inside the results folder ${relative(root, dir)}, which each build replaces ` +
          `whole: write the ${kind.what} elsewhere`,
      );
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st) return;
  if (st.isSymbolicLink())
    throw new UsageError(`-o ${output} is a link: refusing to write through it (name a new file)`);
  if (st.isDirectory())
    throw new UsageError(
      `-o ${output} is a folder: name the ${kind.what} file, e.g. -o ${output}/${kind.example}`,
    );
  if (!st.isFile() || !kind.isOurs(headOf(path)))
    throw new UsageError(
      `-o ${output} exists and is not a ${kind.what}: refusing to overwrite it ` +
        `(name a new file, e.g. ${kind.example})`,
    );
}

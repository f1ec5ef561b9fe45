// Where init and new-task write: new files, in real folders of the project. A name that exists (a file, a
// folder, a link, even a dangling one) is never written over, and no folder on the way may be a link or a
// file, so that nothing is written outside the project or over what medbench did not create.
import type { Stats } from "node:fs";
import { lstatSync, mkdirSync, statSync } from "../util/builtins.js";
import { UsageError } from "../errors.js";
import { isAbsolute, join, relative } from "node:path";

const lstat = (path: string): Stats | null => {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
};

/** Why `rel` (project-relative) cannot be written under `root` as a new file, or null. `existing`: a
 *  plain file there is fine (init adds lines to .gitignore). */
export function placeProblem(root: string, rel: string, existing = false): string | null {
  const parts = rel.split("/");
  for (let i = 1; i < parts.length; i++) {
    const dir = parts.slice(0, i).join("/");
    const st = lstat(join(root, dir));
    if (!st) return null; // made by the writer, a real folder
    if (st.isSymbolicLink()) return `${dir} is a link (medbench writes only into real folders)`;
    if (!st.isDirectory()) return `${dir} is not a folder`;
  }
  const st = lstat(join(root, rel));
  if (!st) return null;
  if (existing && st.isFile()) return null;
  return existing ? `${rel} exists and is not a plain file` : `${rel} exists`;
}

/** The folder to set up: a folder (made when missing), never a file. */
export function rootProblem(root: string): string | null {
  let st: Stats;
  try {
    st = statSync(root);
  } catch {
    return null;
  }
  return st.isDirectory() ? null : `${root} is not a folder`;
}

/** Makes the folder to set up when it is missing, one level only: node's recursive mkdir never returns on
 *  some paths (`/proc/x`), and a misspelt --project should not grow a tree of folders. */
export function makeRoot(root: string): void {
  if (rootProblem(root) === null && lstat(root)) return;
  try {
    mkdirSync(root);
  } catch (e) {
    throw new UsageError(
      `cannot make the folder ${root} (${(e as NodeJS.ErrnoException).code ?? String(e)})\n` +
        "  fix: name a folder that exists, or one inside a folder that exists",
    );
  }
}

/** The file system's refusals of a write that are the user's to fix, with what each means. */
const REFUSED: Record<string, string> = {
  EACCES: "the file system does not let this user write there",
  EPERM: "the file system does not let this user write there",
  EROFS: "the file system is read-only",
  ENAMETOOLONG: "a name on the path is longer than the file system allows",
};

/** Runs one write of init or new-task (`what`: the file, as the user names it); a refusal of the file
 *  system is a clear error, not a crash. */
export function writing<T>(what: string, write: () => T): T {
  try {
    return write();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException | null)?.code;
    const why = typeof code === "string" ? REFUSED[code] : undefined;
    if (!why) throw e;
    throw new UsageError(
      `cannot write ${what} (${code}: ${why})\n` +
        (code === "ENAMETOOLONG"
          ? "  fix: choose a shorter name or folder"
          : "  fix: run it in a folder this user can write (or give it the right to write this one)"),
    );
  }
}

/** A file init or new-task writes, as the user names it: from the working folder, or whole when outside. */
export function shownPath(root: string, rel: string): string {
  const shown = relative(process.cwd(), join(root, rel));
  return shown.startsWith("..") || isAbsolute(shown) ? join(root, rel) : shown || rel;
}

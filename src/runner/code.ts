// The code identity of a stage: sha256 of each source file it runs, following relative imports,
// so that editing a scorer reruns scoring and nothing upstream.
import { readFileSync, existsSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { sha256Hex } from "../hash/sha256.js";

const IMPORT_RE = /^(?!import type)[^\n]*?(?:from\s+|import\s*\(\s*|import\s+)["'](\.{1,2}\/[^"']+)["']/gm;

/** Source files (.ts, found beside the compiled .js names they import) reachable from the entries. */
export function codeHashes(root: string, entries: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const queue = entries.map((e) => resolve(root, e));
  while (queue.length) {
    const file = queue.pop()!;
    const rel = relative(root, file);
    if (rel in out) continue;
    const text = readFileSync(file, "utf8");
    out[rel] = sha256Hex(text);
    for (const m of text.matchAll(IMPORT_RE)) {
      const target = resolve(dirname(file), m[1]!);
      const ts = target.replace(/\.js$/, ".ts");
      if (existsSync(ts)) queue.push(ts);
      else if (existsSync(target)) queue.push(target);
    }
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

// The code identity of a stage: sha256 of each source file it runs, following relative imports,
// so that editing a scorer reruns scoring and nothing upstream.
import { readFileSync, existsSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { sha256Hex } from "../hash/sha256.js";

const IMPORT_RE = /^(?!import type)[^\n]*?(?:from\s+|import\s*\(\s*|import\s+)["'](\.{1,2}\/[^"']+)["']/gm;

// Sources do not change while one build runs: read and hash each once.
const seen = new Map<string, { sha256: string; imports: string[] }>();

function scan(file: string): { sha256: string; imports: string[] } {
  let hit = seen.get(file);
  if (!hit) {
    const text = readFileSync(file, "utf8");
    const imports: string[] = [];
    for (const m of text.matchAll(IMPORT_RE)) {
      const target = resolve(dirname(file), m[1]!);
      const ts = target.replace(/\.js$/, ".ts");
      if (existsSync(ts)) imports.push(ts);
      else if (existsSync(target)) imports.push(target);
    }
    hit = { sha256: sha256Hex(text), imports };
    seen.set(file, hit);
  }
  return hit;
}

/** Source files (.ts, found beside the compiled .js names they import) reachable from the entries. */
export function codeHashes(root: string, entries: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const queue = entries.map((e) => resolve(root, e));
  while (queue.length) {
    const file = queue.pop()!;
    const rel = relative(root, file);
    if (rel in out) continue;
    const { sha256, imports } = scan(file);
    out[rel] = sha256;
    queue.push(...imports);
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

#!/usr/bin/env node
// Why src/util/builtins.ts requires fs, crypto, url and util: a whole process that ES-imports the four
// against one that requires them (as builtins.ts does), side by side in one run, interleaved, against
// `node -e 0`; medians of whole-process wall times, as a user's start-up pays them.
//   node scripts/bench/builtins.mjs [--runs 21]
import { fs, path, os, argv } from "zx";
import { timed } from "./timed.mjs";

const runs = Number(argv.runs ?? 21);
const dir = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-builtins-"));
const NAMES = ["fs", "crypto", "url", "util"];
const imported = path.join(dir, "imported.mjs");
const required = path.join(dir, "required.mjs");
await fs.writeFile(imported, NAMES.map((n) => `import "node:${n}";\n`).join(""));
await fs.writeFile(
  required,
  'import { createRequire } from "node:module";\nconst require = createRequire(import.meta.url);\n' +
    NAMES.map((n) => `require("node:${n}");\n`).join(""),
);
const t = { node: [], imported: [], required: [] };
for (let i = 0; i < runs; i++) {
  t.node.push((await timed("node", ["-e", "0"], dir, { rss: false })).ms);
  t.imported.push((await timed("node", [imported], dir, { rss: false })).ms);
  t.required.push((await timed("node", [required], dir, { rss: false })).ms);
}
const median = (x) => x.sort((a, b) => a - b)[Math.floor(x.length / 2)];
const base = median(t.node);
console.log(`median of ${runs} runs each, against node -e 0`);
console.log(`ES import of fs, crypto, url, util   ${(median(t.imported) / base).toFixed(2)}`);
console.log(`require of the same (builtins.ts)    ${(median(t.required) / base).toFixed(2)}`);
await fs.remove(dir);

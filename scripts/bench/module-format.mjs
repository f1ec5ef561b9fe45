#!/usr/bin/env node
// Why dist/ is CommonJS: whole processes that load a chain of N small modules, as ES modules and as
// CommonJS, against `node -e 0`, interleaved in one run (ratios, and the cost per module beyond node -e 0).
//   node scripts/bench/module-format.mjs [--modules 66] [--runs 21]
import { argv, fs, os, path } from "zx";
import { timed } from "./timed.mjs";

const n = Number(argv.modules ?? 66);
const runs = Number(argv.runs ?? 21);
const dir = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-format-"));
for (let i = 1; i <= n; i++) {
  const next = i < n;
  await fs.writeFile(
    path.join(dir, `m${i}.mjs`),
    `${next ? `import { x${i + 1} } from "./m${i + 1}.mjs";\n` : ""}export const x${i} = ${i};\n`,
  );
  await fs.writeFile(
    path.join(dir, `m${i}.cjs`),
    `${next ? `require("./m${i + 1}.cjs");\n` : ""}exports.x${i} = ${i};\n`,
  );
}
const t = { node: [], esm: [], cjs: [] };
for (let i = 0; i < runs; i++) {
  t.node.push((await timed("node", ["-e", "0"], dir, { rss: false })).ms);
  t.esm.push((await timed("node", ["m1.mjs"], dir, { rss: false })).ms);
  t.cjs.push((await timed("node", ["m1.cjs"], dir, { rss: false })).ms);
}
const median = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];
const base = median(t.node);
console.log(`${n} chained modules, median of ${runs} runs each, against node -e 0`);
for (const k of ["esm", "cjs"]) {
  const m = median(t[k]);
  const per = (m - base) / n;
  const label = k === "esm" ? "ES modules" : "CommonJS  ";
  console.log(`${label}  ${(m / base).toFixed(2)}  (${per.toFixed(2)} ms a module)`);
}
await fs.remove(dir);

// A preload (`node --import tests/support/fs-trace.mjs`) that notes every path a process hands to Node's fs
// functions, written to $FS_TRACE_OUT at exit as JSON { path: [function names] }, and, when
// $FS_TRACE_COUNTS_OUT is set, how many times each was called there: { path: { function name: calls } }.
// The no-op record's test uses it to list what a build really consulted, independently of medbench's own
// bookkeeping; the repeats test, to count how often a build reads each stage manifest.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { resolve } from "node:path";

const seen = new Map();
const note = (name, p) => {
  if (typeof p !== "string" && !(p instanceof URL)) return; // a file descriptor
  const abs = resolve(p instanceof URL ? p.pathname : p);
  if (!seen.has(abs)) seen.set(abs, new Map());
  const calls = seen.get(abs);
  calls.set(name, (calls.get(name) ?? 0) + 1);
};
const SYNC = ["statSync", "lstatSync", "readFileSync", "existsSync", "readdirSync", "openSync"];
const SYNC_MORE = ["realpathSync", "accessSync", "opendirSync", "createReadStream"];
for (const name of [...SYNC, ...SYNC_MORE]) {
  const original = fs[name];
  fs[name] = function (p, ...rest) {
    note(name, p);
    return original.call(this, p, ...rest);
  };
}
for (const name of ["readFile", "stat", "lstat", "open", "readdir", "access", "opendir", "realpath"]) {
  const original = fs.promises[name];
  fs.promises[name] = function (p, ...rest) {
    note(`promises.${name}`, p);
    return original.call(this, p, ...rest);
  };
}
syncBuiltinESMExports();
process.on("exit", () => {
  const out = Object.fromEntries([...seen].map(([p, calls]) => [p, [...calls.keys()].sort()]));
  if (process.env.FS_TRACE_OUT) fs.writeFileSync(process.env.FS_TRACE_OUT, JSON.stringify(out, null, 1));
  const counts = Object.fromEntries([...seen].map(([p, calls]) => [p, Object.fromEntries(calls)]));
  const countsOut = process.env.FS_TRACE_COUNTS_OUT;
  if (countsOut) fs.writeFileSync(countsOut, JSON.stringify(counts, null, 1));
});

// A whole process's wall time (start-up included, no shell between), its output and its peak RSS: each
// Node process it starts writes process.resourceUsage().maxRSS (KB) at exit through a --require hook, and
// the largest is the figure (a child process of the command counts too).
import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "medbench-bench-rss-"));
const hook = join(dir, "peak-rss.cjs");
writeFileSync(
  hook,
  `process.on("exit", () => { const f = process.env.MEDBENCH_BENCH_RSS;
     if (f) require("fs").appendFileSync(f, process.resourceUsage().maxRSS + "\\n"); });\n`,
);
process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** Runs `cmd args` in `cwd`; rejects when it exits non-zero. `rss: false`: no hook (time only; the hook's
 *  own loading is a little start-up cost, which a ratio against `node -e 0` would notice). `env`: variables
 *  added to this process's environment. */
export async function timed(cmd, args, cwd = process.cwd(), { rss: measure = true, env: extra = {} } = {}) {
  const rssFile = join(dir, `rss-${n++}`);
  appendFileSync(rssFile, "");
  const env = measure
    ? { ...process.env, ...extra, NODE_OPTIONS: `--require ${hook}`, MEDBENCH_BENCH_RSS: rssFile }
    : { ...process.env, ...extra };
  const t0 = performance.now();
  const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "",
    stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise((r) => child.on("close", r));
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${code}:\n${stderr.slice(-2000)}`);
  const rss = readFileSync(rssFile, "utf8").trim().split("\n").filter(Boolean).map(Number);
  rmSync(rssFile);
  return { ms, stdout, stderr, rssKB: rss.length ? Math.max(...rss) : NaN };
}

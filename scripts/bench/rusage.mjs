// A whole process tree's cost, as the kernel counts it: wall time, CPU (user + system of the process and
// every descendant it waited for) and peak RSS (the largest of them), read from wait4's rusage, which has
// microsecond resolution (/proc's cutime has 10 ms, too coarse for a 0.1 s command). Node exposes no
// wait4, so a small Python parent spawns the command and reports: python3 is needed.
//   import { measured } from "./rusage.mjs";
//   const { wallMs, cpuMs, rssKB, stdout, stderr } = await measured(["node", "-e", "0"], cwd, env)
import { spawn } from "node:child_process";

// The parent's own start-up is outside both figures: the clock starts just before the spawn, and the
// rusage is the child's alone.
const PARENT = `
import json, os, subprocess, sys, time
argv = json.loads(sys.argv[1])
t0 = time.perf_counter()
child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=sys.stdout, stderr=sys.stderr)
_, status, usage = os.wait4(child.pid, 0)
wall = time.perf_counter() - t0
code = os.waitstatus_to_exitcode(status)
sys.stderr.flush()
os.write(3, json.dumps({"code": code, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
  "user": usage.ru_utime, "system": usage.ru_stime, "rss": usage.ru_maxrss}).encode())
`;

/** Runs `argv` in `cwd`; rejects when it exits non-zero (with the end of its stderr). */
export async function measured(argv, cwd = process.cwd(), env = process.env) {
  const child = spawn("python3", ["-c", PARENT, JSON.stringify(argv)], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe", "pipe"],
  });
  let stdout = "",
    stderr = "",
    report = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  child.stdio[3].on("data", (d) => (report += d));
  const exit = await new Promise((resolve) => child.on("close", resolve));
  if (exit !== 0 || !report)
    throw new Error(`python3 could not run ${argv.join(" ")}:\n${stderr.slice(-2000)}`);
  const r = JSON.parse(report);
  if (r.code !== 0) throw new Error(`${argv.join(" ")} exited ${r.code}:\n${stderr.slice(-2000)}`);
  return {
    wallMs: r.wall * 1000,
    cpuMs: r.cpu * 1000,
    rssKB: r.rss,
    stdout,
    stderr,
  };
}

#!/usr/bin/env node
// `build --roster` against its slowest run built alone: the note-errors roster (four model runs on four
// routes, four built-in baselines) with each route on a fake OpenAI-compatible server of its own answering
// each request in --latency ms (2 s by default, so that model time dominates), every build from an empty
// cache. Prints each run's time alone, the roster's, and the ratio roster / slowest run.
// Usage: npm run build && node scripts/bench/roster.mjs [--latency 2000]
import { $, fs, path, os, argv } from "zx";
import { startFakeOpenAI } from "../fake-openai.mjs";
import { fakeRouteYaml, specsProject } from "./fake-process.mjs";

$.verbose = false;
const latencyMs = Number(argv.latency ?? 2000);
const repo = path.resolve(import.meta.dirname, "../..");
const bin = path.join(repo, "bin/medbench.js");
const spec = "specs/note-errors.yaml";
const routes = ["deepseek", "openai", "zhipu", "alibaba"];
const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-roster-"));
const fakes = await Promise.all(routes.map(() => startFakeOpenAI({ policy: "note-errors", latencyMs })));
const routeText = routes.map((route, i) => fakeRouteYaml(route, fakes[i].url, 8)).join("");
let made = 0;

async function project() {
  const dir = await specsProject(tmp, `project-${made++}`);
  await fs.writeFile(path.join(dir, "routes.yaml"), `routes:\n${routeText}`);
  return dir;
}

async function timed(args) {
  const dir = await project();
  const started = performance.now();
  await $({ cwd: dir, nothrow: true, env: { ...process.env, NO_COLOR: "1" } })`node ${bin} ${args}`;
  return performance.now() - started;
}

const { stdout } =
  await $`node ${bin} check ${spec} --json --registry ${path.join(repo, "examples/routes.yaml")}`.nothrow();
const roster = JSON.parse(stdout).runs.map((run) => run.model);
const alone = [];
for (const model of roster) {
  const ms = await timed(["build", spec, "--model", model, "--registry", "routes.yaml", "--quiet"]);
  alone.push(ms);
  console.log(`${model.padEnd(48)}${(ms / 1000).toFixed(1)} s alone`);
}
const rosterMs = await timed(["build", spec, "--roster", "--registry", "routes.yaml", "--quiet"]);
const slowest = Math.max(...alone);
console.log(
  `roster (${roster.length} runs, fake model answering in ${latencyMs} ms): ` +
    `${(rosterMs / 1000).toFixed(1)} s`,
);
console.log(`sum of the runs alone: ${(alone.reduce((sum, ms) => sum + ms, 0) / 1000).toFixed(1)} s`);
console.log(
  `roster / slowest run alone: ${(rosterMs / slowest).toFixed(2)}  ` +
    `(load average ${os.loadavg()[0].toFixed(1)})`,
);
await Promise.all(fakes.map((fake) => fake.close()));
await fs.remove(tmp);

#!/usr/bin/env node
// Machines building one model at the same time through one shared remote, without --shard: requests sent
// more than once, and wall time against one machine, with claims (the S3 server refuses a second
// conditional write, as AWS S3 and MinIO do) and without (--no-conditional-writes: the store cannot claim,
// so the build falls back to sending what it does not find). Each machine is a process with its own project
// clone and local cache; the model is the fake OpenAI-compatible server answering each request in --latency
// ms, so that model time dominates. Usage: npm run build && node scripts/bench/claims.mjs [--latency 200]
import { $, fs, path, os, argv } from "zx";
import { startS3 } from "../s3-server.mjs";
import { startFakeOpenAI } from "../fake-openai.mjs";
import { remoteEnv, specsProject, writeFakeRoutes } from "./fake-process.mjs";

$.verbose = false;
const latencyMs = Number(argv.latency ?? 200);
const repo = path.resolve(import.meta.dirname, "../..");
const bin = path.join(repo, "bin/medbench.js");
const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-claims-"));
let made = 0;

const clone = async (fake) => {
  const dir = await specsProject(tmp, `clone-${made++}`);
  await writeFakeRoutes(dir, fake.url, 4);
  return dir;
};

/** `machines` processes against one fresh remote; the fake's counts and the wall time. `throttled`: every
 *  claim write answered 503 SlowDown (claiming turns itself off: it must cost no more than no claims). */
async function round(machines, conditional, throttled = false) {
  const s3 = await startS3({ dir: path.join(tmp, `s3-${made}`), conditional });
  if (throttled) s3.refused.add("PUT", "/claims/", 503);
  const fake = await startFakeOpenAI({ latencyMs });
  const env = remoteEnv(s3.endpoint);
  const dirs = await Promise.all(Array.from({ length: machines }, () => clone(fake)));
  const build = ["build", "specs/voice-command.yaml", "--model", "fake/test-model"];
  const started = performance.now();
  await Promise.all(
    dirs.map((dir) => $({ cwd: dir, env })`node ${bin} ${build} --registry routes.yaml --quiet 2>/dev/null`),
  );
  const ms = performance.now() - started;
  const counts = [...fake.stats.bodies.values()];
  await fake.close();
  await s3.close();
  return { ms, bodies: counts.length, sent: fake.stats.requests, twice: counts.filter((n) => n > 1).length };
}

const one = await round(1, true);
console.log(`voice-command, fake model answering in ${latencyMs} ms, ${one.bodies} request bodies`);
console.log("machines  claims     sent  bodies sent twice+  wall / one machine");
const line = (machines, claims, r) =>
  console.log(
    `${String(machines).padEnd(10)}${claims.padEnd(11)}${String(r.sent).padEnd(6)}` +
      `${String(r.twice).padEnd(20)}${(r.ms / one.ms).toFixed(2)}`,
  );
line(1, "yes", one);
for (const machines of [2, 4]) {
  line(machines, "yes", await round(machines, true));
  line(machines, "no", await round(machines, false));
  line(machines, "throttled", await round(machines, true, true));
}
console.log(`load average ${os.loadavg()[0].toFixed(1)}`);
await fs.remove(tmp);

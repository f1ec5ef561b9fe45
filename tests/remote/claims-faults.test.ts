// Claims under faults (src/remote/claims.ts): three or four machines (project clones, each a process with
// its own local cache and, where it matters, its own host name through tests/support/fake-host.cjs) build
// one model at once against the test S3 server, one fault each: a holder whose reply uploads fail, a holder
// killed on another host, a holder stopped past its claims' deadline, a holder left a zombie, claim writes
// throttled. All send to one fake server (one base_url: one request key), each with a key of its own, so
// that who sent what is counted: every body goes out at most once from the healthy machines, and at most
// once more from the faulty one; every result is byte-equal to one machine's alone; each machine that waited
// named whom it waited for, and until when. A faulty holder whose claims must pass their deadline has a
// small TTL (MEDBENCH_CLAIM_TTL_S=2, which its claims say); every other machine one no test waits out, so
// that a loaded run, however slow, never takes a healthy machine's claim over. Counted events: no
// wall-clock assertion.
import { afterEach, describe, expect, it } from "vitest";
import { execa, type ResultPromise } from "execa";
import { readdirSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { BIN, Project, type Run } from "../support/rig.js";
import { REPO } from "../support/helpers.js";
import { THROTTLED_IN_A_ROW } from "../../src/remote/claims.js";
import {
  cleanUp,
  PREFIX,
  remoteEnv,
  results,
  startFake,
  startS3,
  warnings,
  type Fake,
  type S3,
} from "../support/remote-rig.js";

afterEach(cleanUp);

const FAKE_HOST = join(REPO, "tests/support/fake-host.cjs");

const projects: Project[] = [];
afterEach(() => projects.splice(0).forEach((p) => p.remove()));

/** A machine: a project whose route `fake` sends to the fake with the machine's own key ($MACHINE_KEY). */
function machine(fake: Fake): Project {
  const p = new Project();
  projects.push(p);
  p.write(
    "routes.yaml",
    `routes:\n  fake:\n    base_url: ${fake.url}\n    api_key_env: MACHINE_KEY\n    concurrency: 4\n` +
      "    request:\n      thinking_off: { chat_template_kwargs: { enable_thinking: false } }\n",
  );
  return p;
}

/** A machine's environment: the shared remote, its claims' TTL, its name and key and (`host`) its host
 *  name. A claim holds for its holder's TTL: "2" for a holder whose claims must pass their deadline. */
const DEADLINE_TTL = "2";
function machineEnv(s3: S3, name: string, host: boolean, ttl = "600"): Record<string, string> {
  return {
    ...remoteEnv(s3),
    MEDBENCH_CLAIM_TTL_S: ttl,
    MEDBENCH_MACHINE_ID: name,
    MACHINE_KEY: `key-${name}`,
    ...(host ? { NODE_OPTIONS: `--require ${FAKE_HOST}`, FAKE_HOSTNAME: name } : {}),
  };
}

type Child = ResultPromise;

/** Resolves once the running process has written `text` (to stderr, or `stream`); fails if it ends first. */
function says(child: Child, text: string | RegExp, stream: "stderr" | "stdout" = "stderr"): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const hit = () => (typeof text === "string" ? seen.includes(text) : text.test(seen));
    child[stream]!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (hit()) resolve(seen);
    });
    void child.then(() =>
      hit() ? resolve(seen) : reject(new Error(`ended without saying ${text}:\n${seen}`)),
    );
  });
}

const ran = async (child: Child): Promise<Run> => {
  const r = await child;
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
};

/** The info lines of a --json build's event stream. */
const infos = (stderr: string): string[] =>
  stderr
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { type: string; message?: string })
    .filter((event) => event.type === "info")
    .map((event) => event.message ?? "");

/** Waits for `done`; fails, rather than wait forever, once a build it waits on (`on`) has ended. */
const until = async (done: () => boolean, on: Child[] = []) => {
  while (!done()) {
    const ended = on.find((child) => child.exitCode !== null || child.signalCode !== null);
    if (ended) throw new Error(`a build ended first:\n${(await ran(ended)).stderr}`);
    await new Promise((wake) => setTimeout(wake, 10));
  }
};

/** Sends per body (its JSON) by the machines named, or by all. */
function sends(fake: Fake, names?: string[]): Map<string, number> {
  const keys = names?.map((name) => `Bearer key-${name}`);
  const out = new Map<string, number>();
  for (const { body, authorization } of fake.stats.received)
    if (!keys || keys.includes(authorization ?? "")) {
      const text = JSON.stringify(body);
      out.set(text, (out.get(text) ?? 0) + 1);
    }
  return out;
}

const most = (counts: Map<string, number>) => Math.max(0, ...counts.values());

/** Who sent each body that the machines named sent more than once, and what each of them said on the way
 *  (a retry is on its stderr): a failure says whether two machines sent it, or one machine twice. */
function twice(fake: Fake, names: string[], runs: Run[]): string {
  const again = [...sends(fake, names)].filter(([, count]) => count > 1).map(([body]) => body);
  const senders = fake.stats.received
    .filter((r) => again.includes(JSON.stringify(r.body)))
    .map((r) => r.authorization ?? "(none)");
  const retries = runs.flatMap((run) => run.stderr.split("\n").filter((line) => /retry|error/i.test(line)));
  return `sent again by ${senders.join(", ")}; lines on errors and retries:\n${retries.join("\n")}`;
}

/** One machine alone, with no remote: the result every machine must equal. */
async function alone(fake: Fake): Promise<Record<string, string>> {
  const solo = machine(fake);
  const run = await solo.buildAgainstFake([], { MACHINE_KEY: "key-solo" });
  expect(run.exitCode, run.stderr).toBe(0);
  return results(solo);
}

/** Holds the replies to one machine's requests until `open()`: they stay in flight. */
function hold(fake: Fake, name: string, heldStatus: number | null = null): () => void {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  fake.set({ gate, holdAuthorization: `Bearer key-${name}`, heldStatus });
  return () => {
    open();
    fake.set({ gate: null });
  };
}

const sentBy = (fake: Fake, name: string) =>
  fake.stats.received.filter((r) => r.authorization === `Bearer key-${name}`).length;

const WAITING = (name: string, pid: number | undefined, host = name) =>
  new RegExp(`waiting for ${name} \\(pid ${pid} on ${host}\\).*the first at \\d\\d:\\d\\d:\\d\\d UTC`);

describe("claims under faults", () => {
  it("a holder killed on another host: its claims are taken over after their TTL, each by one", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake()]);
    hold(fake, "host-a");
    const holder = machine(fake).start(
      Project.fakeBuildArgs(),
      machineEnv(s3, "host-a", true, DEADLINE_TTL),
    );
    await until(() => sentBy(fake, "host-a") >= 4, [holder]); // its four workers' requests, claimed
    const names = ["host-b", "host-c", "host-d"];
    const machines = names.map(() => machine(fake));
    const waiters = machines.map((m, i) =>
      m.start(Project.fakeBuildArgs(), machineEnv(s3, names[i]!, true)),
    );
    await Promise.all(waiters.map((waiter) => says(waiter, WAITING("host-a", holder.pid))));
    holder.kill("SIGKILL");
    await holder;
    const runs = await Promise.all(waiters.map(ran));
    for (const run of runs) expect(run.exitCode, run.stderr).toBe(0);
    for (const run of runs) expect(infos(run.stderr).join("\n")).toMatch(WAITING("host-a", holder.pid));
    const takeovers = runs
      .flatMap((run) => infos(run.stderr))
      .filter((line) => line.includes("taking over"));
    expect(takeovers.join("\n")).toMatch(/claimed by host-a .*passed its deadline/);
    // The killed holder's four bodies went out once more, from one machine each; every other body once.
    expect(sentBy(fake, "host-a")).toBe(4);
    expect(most(sends(fake, names)), twice(fake, names, runs)).toBe(1);
    expect(most(sends(fake))).toBeLessThanOrEqual(2);
    const solo = await alone(fake);
    for (const m of machines) expect(results(m)).toEqual(solo);
  });

  it("a holder stopped past its deadline takes the replies stored meanwhile, sending none", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake()]);
    // Its requests in flight when it stops; when it runs again, each gets a 5xx: another try is due.
    const release = hold(fake, "host-a", 503);
    const a = machine(fake);
    const holder = a.start(Project.fakeBuildArgs(), machineEnv(s3, "host-a", true, DEADLINE_TTL));
    await until(() => sentBy(fake, "host-a") >= 4, [holder]);
    holder.kill("SIGSTOP");
    const names = ["host-b", "host-c", "host-d"];
    const machines = names.map(() => machine(fake));
    const runs = await Promise.all(
      machines.map((m, i) => m.run(Project.fakeBuildArgs(), machineEnv(s3, names[i]!, true))),
    );
    for (const run of runs) expect(run.exitCode, run.stderr).toBe(0);
    // A machine that comes late may find the holder's claims already taken over, and wait on the taker.
    const said = runs.flatMap((run) => infos(run.stderr)).join("\n");
    expect(said).toMatch(WAITING("host-a", holder.pid));
    release();
    holder.kill("SIGCONT");
    const resumed = await ran(holder);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(warnings(resumed.stderr)).toEqual([]);
    expect(sentBy(fake, "host-a")).toBe(4); // nothing sent again on resume
    expect(infos(resumed.stderr).join("\n")).toMatch(/passed its claim's deadline .*another machine took/);
    expect(resumed.stderr).not.toMatch(/AbortError|Request aborted/);
    expect(most(sends(fake, names)), twice(fake, names, runs)).toBe(1);
    expect(most(sends(fake))).toBeLessThanOrEqual(2);
    const solo = await alone(fake);
    for (const m of [a, ...machines]) expect(results(m)).toEqual(solo);
  });

  it("a zombie holder on this host is dead: its claims are taken at once, not after a TTL", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake()]);
    hold(fake, "host-a");
    const a = machine(fake);
    // The build's parent execs into `sleep`, which never reaps it: killed, it stays a zombie.
    const args = Project.fakeBuildArgs().join(" ");
    const parent = execa("sh", ["-c", `node ${BIN} ${args} >build.out 2>&1 & echo $!; exec sleep 100000`], {
      cwd: a.dir,
      env: { NO_COLOR: "1", ...machineEnv(s3, "host-a", false) },
      reject: false,
    });
    const pid = Number((await says(parent, /^\d+\n/, "stdout")).trim());
    await until(() => sentBy(fake, "host-a") >= 4);
    const names = ["host-b", "host-c"];
    const machines = names.map(() => machine(fake));
    const waiters = machines.map((m, i) =>
      m.start(Project.fakeBuildArgs(), machineEnv(s3, names[i]!, false)),
    );
    await Promise.all(waiters.map((waiter) => says(waiter, WAITING("host-a", pid, hostname()))));
    process.kill(pid, "SIGKILL");
    await until(() => readFileSync(`/proc/${pid}/stat`, "latin1").split(") ")[1]!.startsWith("Z"));
    const runs = await Promise.all(waiters.map(ran));
    parent.kill("SIGKILL");
    for (const run of runs) expect(run.exitCode, run.stderr).toBe(0);
    const takeovers = runs
      .flatMap((run) => infos(run.stderr))
      .filter((line) => line.includes("taking over"));
    expect(takeovers.join("\n")).toMatch(/claimed by host-a .*a zombie/);
    expect(most(sends(fake, names)), twice(fake, names, runs)).toBe(1);
    expect(most(sends(fake))).toBeLessThanOrEqual(2);
    const solo = await alone(fake);
    for (const m of machines) expect(results(m)).toEqual(solo);
  });

  it("a reply whose upload fails releases its claim, and another machine sends it", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake({ latencyMs: 20 })]);
    await s3.refuse("PUT", "/replies/", 503, "host-a"); // every reply upload of one machine: slow down
    const a = machine(fake);
    const holder = a.start(Project.fakeBuildArgs(), machineEnv(s3, "host-a", true));
    await until(() => sentBy(fake, "host-a") >= 4, [holder]);
    const names = ["host-b", "host-c"];
    const machines = names.map(() => machine(fake));
    const waiters = machines.map((m, i) =>
      m.start(Project.fakeBuildArgs(), machineEnv(s3, names[i]!, true)),
    );
    const runs = await Promise.all([holder, ...waiters].map(ran));
    for (const run of runs) expect(run.exitCode, run.stderr).toBe(0);
    const waits = runs
      .slice(1)
      .flatMap((run) => infos(run.stderr).filter((line) => line.includes("waiting")));
    expect(waits.join("\n")).toMatch(WAITING("host-a", holder.pid));
    const said = warnings(runs[0]!.stderr).join("\n");
    expect(said).toMatch(/did not take 3 replies of this machine in a row .*requests now go unclaimed/);
    // The holder sent each body at most once, the others at most once between them; the store has all.
    expect(most(sends(fake, ["host-a"]))).toBe(1);
    expect(most(sends(fake, names)), twice(fake, names, runs)).toBe(1);
    expect(await s3.refused()).toBeGreaterThan(0);
    expect(storedReplies(s3)).toBe(sends(fake).size);
    const solo = await alone(fake);
    for (const m of [a, ...machines]) expect(results(m)).toEqual(solo);
  });

  it("claim writes throttled: claiming is off for the run, said once, and costs no more sends", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake()]);
    await s3.refuse("PUT", "/claims/", 503); // every claim write: slow down
    const names = ["host-a", "host-b", "host-c"];
    const machines = names.map(() => machine(fake));
    // Every reply held until each machine has sent a request (so tried to claim first): one started late
    // on a loaded machine would otherwise find every reply stored by the others, and claim nothing.
    let open!: () => void;
    fake.set({ gate: new Promise<void>((resolve) => (open = resolve)), holdAuthorization: null });
    const builds = machines.map((m, i) => m.start(Project.fakeBuildArgs(), machineEnv(s3, names[i]!, true)));
    await until(() => names.every((name) => sentBy(fake, name) >= 1), builds);
    open();
    fake.set({ gate: null });
    const runs = await Promise.all(builds.map(ran));
    for (const run of runs) expect(run.exitCode, run.stderr).toBe(0);
    for (const run of runs) {
      const said = warnings(run.stderr);
      expect(said.length, said.join("\n")).toBe(1);
      expect(said[0]).toMatch(/throttled \d+ claim writes in a row: claiming is off .*now go unclaimed/);
    }
    // A few claim writes a machine, each tried once; no machine sends a body twice.
    expect(await s3.refused()).toBeLessThanOrEqual(THROTTLED_IN_A_ROW * names.length);
    for (const name of names) expect(most(sends(fake, [name]))).toBe(1);
    const solo = await alone(fake);
    for (const m of machines) expect(results(m)).toEqual(solo);
  });
});

/** The replies in the test S3 server's bucket. */
function storedReplies(s3: S3): number {
  const dir = join(s3.dir, "medbench", PREFIX, "replies", "requests");
  return readdirSync(dir).filter((name) => name.endsWith("._S3rver_object")).length;
}

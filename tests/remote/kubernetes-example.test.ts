// examples/kubernetes: every manifest checked against the Kubernetes API reference's fields (a schema subset
// per kind, tests/data/kubernetes/README.md), then the example run as written from what a fresh clone holds:
// the image made as its Dockerfile makes it (the clone's files less .dockerignore, compiled), each pod's
// command run in a copy of that image with the files its manifests mount (the ConfigMap's route file, the
// results volume) and its Secrets' keys, with the index the Job controller would give it, against the fake
// server (the route file's one edit: its base_url) and a real S3-protocol server. Every request is sent once
// over the shards and the assembly equals one machine's build. run.sh is run with a kubectl that answers as
// the API server would: a failed shards Job stops it at once, without the assembly.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Ajv } from "ajv";
import { execa } from "execa";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import { REPO, testData } from "../support/helpers.js";
import {
  cleanUp,
  remoteEnv,
  results,
  startFake,
  startS3,
  warnings,
  type Fake,
  type S3,
} from "../support/remote-rig.js";

afterEach(cleanUp);
const EXAMPLE = resolve(REPO, "examples/kubernetes");
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
const temp = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `medbench-k8s-${name}-`));
  dirs.push(dir);
  return dir;
};

type Env = { name: string; value?: string };
type Mount = { name: string; mountPath: string };
type Container = {
  command: string[];
  env: Env[];
  envFrom?: { secretRef?: { name: string } }[];
  workingDir: string;
  volumeMounts?: Mount[];
};
type Volume = { name: string; configMap?: { name: string }; persistentVolumeClaim?: { claimName: string } };
type Job = {
  kind: "Job";
  metadata: { name: string };
  spec: {
    completionMode?: string;
    completions?: number;
    parallelism?: number;
    backoffLimitPerIndex?: number;
    template: { spec: { restartPolicy: string; containers: Container[]; volumes?: Volume[] } };
  };
};
type Manifest = { kind: string; metadata: { name: string }; data?: Record<string, string> };

/** Every object of every manifest of the example, by kind and name. */
const MANIFESTS: Manifest[] = readdirSync(EXAMPLE)
  .filter((name) => name.endsWith(".yaml"))
  .flatMap((name) =>
    parseAllDocuments(readFileSync(join(EXAMPLE, name), "utf8")).map((doc) => doc.toJS() as Manifest),
  );
const find = <T extends Manifest>(kind: string, name: string): T => {
  const found = MANIFESTS.find((m) => m.kind === kind && m.metadata.name === name);
  expect(found, `${kind} ${name} is defined in examples/kubernetes/`).toBeDefined();
  return found as T;
};
const SHARDS = find<Manifest & Job>("Job", "medbench-shards");
const ASSEMBLE = find<Manifest & Job>("Job", "medbench-assemble");
const containerOf = (job: Job) => job.spec.template.spec.containers[0]!;

/** The API server's cross-field rules for a Job, as the reference states them; an empty list when valid. */
function jobRuleProblems(job: Job): string[] {
  const { spec } = job;
  const problems: string[] = [];
  const restart = spec.template.spec.restartPolicy;
  if (restart !== "Never" && restart !== "OnFailure")
    problems.push("restartPolicy must be Never or OnFailure");
  if (spec.completionMode === "Indexed" && spec.completions === undefined)
    problems.push("Indexed completion mode needs completions");
  if (spec.backoffLimitPerIndex !== undefined && spec.completionMode !== "Indexed")
    problems.push("backoffLimitPerIndex needs Indexed completion mode");
  if (spec.backoffLimitPerIndex !== undefined && restart !== "Never")
    problems.push("backoffLimitPerIndex needs restartPolicy Never");
  return problems;
}

const envOf = (container: Container): Record<string, string> =>
  Object.fromEntries(
    container.env.filter((env) => env.value !== undefined).map((env) => [env.name, env.value!]),
  );

/** Whether .dockerignore leaves a path (relative to the project's top) out of the image: a line names a
 *  top-level name or a path, or `*.ext` any file so named (the patterns the file uses). */
function ignoredByDocker(path: string, patterns: string[]): boolean {
  const base = path.split("/").pop()!;
  return patterns.some((pattern) =>
    pattern.startsWith("*.")
      ? base.endsWith(pattern.slice(1))
      : path === pattern || path.startsWith(`${pattern}/`),
  );
}

/** The image as the Dockerfile makes it from a fresh clone: COPY . . of what git would check out (less
 *  .dockerignore), then `npm ci` (here the clone's node_modules, offline) and `npm run build`. */
async function image(): Promise<string> {
  const dir = temp("image");
  const patterns = readFileSync(join(REPO, ".dockerignore"), "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"));
  const listed = await execa("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: REPO,
  });
  for (const path of listed.stdout.split("\0").filter(Boolean)) {
    if (ignoredByDocker(path, patterns) || !existsSync(join(REPO, path))) continue;
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    cpSync(join(REPO, path), join(dir, path));
  }
  symlinkSync(join(REPO, "node_modules"), join(dir, "node_modules"));
  const built = await execa("npm", ["run", "--silent", "build"], { cwd: dir, reject: false });
  expect(built.exitCode, String(built.stderr)).toBe(0);
  return dir;
}

/** Where a pod's mounts are on this machine: each ConfigMap's files written out, each claim one folder. */
function mounts(
  job: Job,
  claims: Map<string, string>,
  route: (text: string) => string,
): Map<string, string> {
  const out = new Map<string, string>();
  const volumes = job.spec.template.spec.volumes ?? [];
  for (const mount of containerOf(job).volumeMounts ?? []) {
    const volume = volumes.find((v) => v.name === mount.name)!;
    expect(volume, mount.name).toBeDefined();
    if (volume.configMap) {
      const dir = temp("configmap");
      const { data } = find("ConfigMap", volume.configMap.name);
      for (const [file, text] of Object.entries(data ?? {})) writeFileSync(join(dir, file), route(text));
      out.set(mount.mountPath, dir);
    } else {
      const claim = volume.persistentVolumeClaim!.claimName;
      find("PersistentVolumeClaim", claim);
      if (!claims.has(claim)) claims.set(claim, temp("claim"));
      out.set(mount.mountPath, claims.get(claim)!);
    }
  }
  return out;
}

/** A path of the pod's file system, on this machine. */
const rerooted = (value: string, at: Map<string, string>) => {
  for (const [path, dir] of at)
    if (value === path || value.startsWith(`${path}/`)) return dir + value.slice(path.length);
  return value;
};

interface Pod {
  project: string;
  run: ReturnType<typeof execa>;
}

/** One pod of a Job: a copy of the image as /project, `medbench` on PATH (npm link), the manifests' mounts
 *  and env, its Secrets' keys from `secrets`, and `extra` (the Job controller's index). */
function startPod(job: Job, base: string, world: World, extra: Record<string, string> = {}): Pod {
  const container = containerOf(job);
  const project = temp("pod");
  cpSync(base, project, { recursive: true, verbatimSymlinks: true });
  const at = mounts(job, world.claims, world.route);
  at.set(container.workingDir, project);
  const bin = join(project, ".path");
  mkdirSync(bin);
  writeFileSync(
    join(bin, "medbench"),
    `#!/bin/sh\nexec node ${JSON.stringify(join(project, "bin/medbench.js"))} "$@"\n`,
  );
  chmodSync(join(bin, "medbench"), 0o755);
  const env: Record<string, string> = { PATH: `${bin}:${process.env.PATH}` };
  for (const from of container.envFrom ?? []) Object.assign(env, world.secrets[from.secretRef!.name]);
  for (const [name, value] of Object.entries(envOf(container))) env[name] = rerooted(value, at);
  const [shell, ...args] = container.command;
  const cwd = rerooted(container.workingDir, at);
  return {
    project,
    run: execa(shell!, args, { cwd, reject: false, env: { ...env, ...extra }, stdin: "ignore" }),
  };
}

interface World {
  claims: Map<string, string>;
  secrets: Record<string, Record<string, string>>;
  route: (text: string) => string;
}

/** The route file's one edit: its server is the fake. */
const toFake = (fake: Fake) => (text: string) => text.replace(/base_url: \S+/g, `base_url: ${fake.url}`);

/** The keys the docs' `kubectl create secret` lines give each Secret. */
function documentedSecrets(): Map<string, string[]> {
  const doc = readFileSync(join(REPO, "docs/remote-cache.md"), "utf8").replace(/\s*\\\n\s*/g, " ");
  const out = new Map<string, string[]>();
  for (const match of doc.matchAll(/kubectl create secret generic (\S+)((?: --from-literal=\w+=\S*)+)/g))
    out.set(
      match[1]!,
      [...match[2]!.matchAll(/--from-literal=(\w+)=/g)].map((m) => m[1]!),
    );
  return out;
}

describe("the Kubernetes example", () => {
  it("uses only the fields of each kind the API reference gives, with the values it accepts", () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const schemas: Record<string, string> = {
      Job: "job-batch-v1.subset.json",
      ConfigMap: "configmap-v1.subset.json",
      PersistentVolumeClaim: "pvc-v1.subset.json",
    };
    const validators = Object.fromEntries(
      Object.entries(schemas).map(([kind, file]) => [
        kind,
        ajv.compile(JSON.parse(readFileSync(testData("kubernetes", file), "utf8"))),
      ]),
    );
    for (const manifest of MANIFESTS) {
      const validate = validators[manifest.kind];
      expect(validate, `a schema for ${manifest.kind}`).toBeDefined();
      expect(validate!(manifest), JSON.stringify(validate!.errors)).toBe(true);
      if (manifest.kind === "Job") expect(jobRuleProblems(manifest as unknown as Job)).toEqual([]);
    }
    // The checks bite: a misspelt field and a broken rule are both found.
    const misspelt = structuredClone(SHARDS) as Job & { spec: { completion?: number } };
    misspelt.spec.completion = 4;
    expect(validators.Job!(misspelt)).toBe(false);
    const restarting = structuredClone(SHARDS);
    restarting.spec.template.spec.restartPolicy = "OnFailure";
    expect(jobRuleProblems(restarting)).toEqual(["backoffLimitPerIndex needs restartPolicy Never"]);
  });

  it("gives every index its own share, and names only Secrets and keys the docs say to create", () => {
    const { spec } = SHARDS;
    expect(spec.completionMode).toBe("Indexed");
    const container = containerOf(SHARDS);
    expect(Number(envOf(container).SHARDS)).toBe(spec.completions);
    expect(spec.parallelism).toBeLessThanOrEqual(spec.completions!);
    expect(container.command.join(" ")).toContain('--shard "$((JOB_COMPLETION_INDEX + 1))/$SHARDS"');
    const documented = documentedSecrets();
    const secrets = [SHARDS, ASSEMBLE].flatMap((job) => containerOf(job).envFrom ?? []);
    expect(secrets.length).toBeGreaterThan(0);
    for (const from of secrets)
      expect(documented.has(from.secretRef!.name), from.secretRef!.name).toBe(true);
    // The route file's key variable is one of the provider Secret's keys.
    const routes = find("ConfigMap", "medbench-routes").data!["routes.yaml"]!;
    const keyVariables = [...routes.matchAll(/api_key_env: (\w+)/g)].map((match) => match[1]!);
    expect(keyVariables.length).toBeGreaterThan(0);
    for (const name of keyVariables) expect(documented.get("medbench-provider")).toContain(name);
    expect(documented.get("medbench-remote")).toEqual(expect.arrayContaining(["MEDBENCH_REMOTE"]));
  });

  describe("run as written from a fresh clone", () => {
    let base = "";
    beforeAll(async () => {
      base = await image();
    }, 0);

    it("sends each request once over the shards, and assembles one machine's result", async () => {
      const [s3, fake] = await Promise.all([startS3(), startFake({ policy: "note-errors-plain" })]);
      const world = worldOf(s3, fake);
      const pods = Array.from({ length: SHARDS.spec.completions! }, (_, index) =>
        startPod(SHARDS, base, world, { JOB_COMPLETION_INDEX: String(index) }),
      );
      for (const pod of pods) {
        const run = await pod.run;
        expect(run.exitCode, String(run.stderr)).toBe(0);
      }
      const counts = [...fake.stats.bodies.values()];
      expect(counts.length).toBeGreaterThan(0);
      expect(counts.every((count) => count === 1)).toBe(true);
      const sent = fake.stats.requests;

      const assembler = startPod(ASSEMBLE, base, world);
      const assembled = await assembler.run;
      expect(assembled.exitCode, String(assembled.stderr)).toBe(0);
      expect(warnings(String(assembled.stderr))).toEqual([]);
      expect(fake.stats.requests).toBe(sent);
      const out = world.claims.get("medbench-results")!;
      expect(existsSync(join(out, "report.html")) && existsSync(join(out, "medbench.lock"))).toBe(true);

      // One machine: the same image, route file and model, no remote.
      const solo = temp("solo");
      cpSync(base, solo, { recursive: true, verbatimSymlinks: true });
      const { SPEC, MODEL } = envOf(containerOf(ASSEMBLE));
      writeFileSync(
        join(solo, "routes.yaml"),
        world.route(find("ConfigMap", "medbench-routes").data!["routes.yaml"]!),
      );
      const alone = await execa(
        "node",
        ["bin/medbench.js", "build", SPEC!, "--model", MODEL!, "--registry", "routes.yaml"],
        {
          cwd: solo,
          reject: false,
          env: { VLLM_API_KEY: "vllm-test-key" },
        },
      );
      expect(alone.exitCode, String(alone.stderr)).toBe(0);
      const [task] = readdirSync(join(solo, "results"));
      const [model] = readdirSync(join(solo, "results", task!));
      const folder = `results/${task}/${model}`;
      expect(results(under(out), folder)).toEqual(results(under(solo), folder));
    });
  });

  it("run.sh assembles once the shards Job is complete, and stops at once when it failed", async () => {
    for (const shards of ["Complete", "Failed"]) {
      const dir = temp("kubectl");
      const log = join(dir, "kubectl.log");
      // kubectl as the API server answers: `get job` gives the Job's true conditions.
      writeFileSync(
        join(dir, "kubectl"),
        `#!/bin/sh\necho "$*" >> ${JSON.stringify(log)}\n` +
          `case "$*" in "get job medbench-shards"*) echo SuccessCriteriaMet ${shards};; ` +
          `"get job medbench-assemble"*) echo Complete;; esac\n`,
      );
      chmodSync(join(dir, "kubectl"), 0o755);
      const run = await execa("sh", [join(EXAMPLE, "run.sh")], {
        cwd: REPO,
        reject: false,
        env: { PATH: `${dir}:${process.env.PATH}`, MEDBENCH_POLL_S: "0" },
      });
      const calls = readFileSync(log, "utf8").trim().split("\n");
      const applied = calls.filter((call) => call.startsWith("apply")).join("\n");
      expect(applied).toContain("shards-job.yaml");
      expect(applied).toMatch(/routes-configmap\.yaml.*results-volume\.yaml/);
      expect(calls.filter((call) => call.startsWith("get job medbench-shards")).length).toBe(1);
      if (shards === "Complete") {
        expect(run.exitCode, String(run.stderr)).toBe(0);
        expect(applied).toContain("assemble-job.yaml");
      } else {
        expect(run.exitCode).toBe(1);
        expect(String(run.stderr)).toMatch(/job medbench-shards failed/);
        expect(applied).not.toContain("assemble-job.yaml");
      }
    }
  });
});

/** A folder, as results() reads a project. */
const under = (dir: string) => ({ path: (...parts: string[]) => join(dir, ...parts) });

/** The cluster the pods see: the results claim's folder, the Secrets' keys, and the route file's server. */
function worldOf(s3: S3, fake: Fake): World {
  return {
    claims: new Map(),
    secrets: { "medbench-remote": remoteEnv(s3), "medbench-provider": { VLLM_API_KEY: "vllm-test-key" } },
    route: toFake(fake),
  };
}

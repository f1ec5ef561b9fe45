// examples/kubernetes: the indexed Job's fields checked against batch/v1 Job as the Kubernetes API
// reference (v1.33) documents them (tests/data/kubernetes/README.md), then its pods' shell commands run as
// written, with the index the Job controller would give each pod, against the fake server and a real
// S3-protocol server: every request is sent once and the assembly equals one machine's build.
import { afterEach, describe, expect, it } from "vitest";
import { Ajv } from "ajv";
import { execa } from "execa";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { REPO, testData } from "./helpers.js";
import { BIN, type Project } from "./rig.js";
import { cleanUp, clone, remoteEnv, results, startFake, startS3, warnings } from "./remote-rig.js";

afterEach(cleanUp);

type Env = { name: string; value?: string };
type Container = { command: string[]; env: Env[] };
type Job = {
  spec: {
    completionMode?: string;
    completions?: number;
    parallelism?: number;
    backoffLimitPerIndex?: number;
    template: { spec: { restartPolicy: string; containers: Container[] } };
  };
};

const readJob = (name: string): Job =>
  parse(readFileSync(resolve(REPO, "examples/kubernetes", name), "utf8")) as Job;
const SHARDS = readJob("shards-job.yaml");
const ASSEMBLE = readJob("assemble-job.yaml");

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

/** A folder holding `medbench`, as the image's PATH has it (examples/kubernetes/Dockerfile). */
function medbenchOnPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "medbench-path-"));
  writeFileSync(join(dir, "medbench"), `#!/bin/sh\nexec node ${JSON.stringify(BIN)} "$@"\n`);
  chmodSync(join(dir, "medbench"), 0o755);
  return dir;
}

/** Runs a container's command in a project, with its env, the test's route and remote, and `extra`. */
function runPod(project: Project, container: Container, extra: Record<string, string>) {
  const [shell, ...args] = container.command;
  const env = { ...envOf(container), SPEC: "specs/voice-command.yaml", MODEL: "fake/test-model", ...extra };
  return execa(shell!, args, { cwd: project.dir, reject: false, env, extendEnv: true, stdin: "ignore" });
}

describe("the Kubernetes example", () => {
  it("uses only batch/v1 Job fields, with the values the API accepts", () => {
    const schema = JSON.parse(readFileSync(testData("kubernetes/job-batch-v1.subset.json"), "utf8"));
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    for (const job of [SHARDS, ASSEMBLE]) {
      expect(validate(job), JSON.stringify(validate.errors)).toBe(true);
      expect(jobRuleProblems(job)).toEqual([]);
    }
    // The checks bite: a misspelt field and a broken rule are both found.
    const misspelt = structuredClone(SHARDS) as Job & { spec: { completion?: number } };
    misspelt.spec.completion = 4;
    expect(validate(misspelt)).toBe(false);
    const restarting = structuredClone(SHARDS);
    restarting.spec.template.spec.restartPolicy = "OnFailure";
    expect(jobRuleProblems(restarting)).toEqual(["backoffLimitPerIndex needs restartPolicy Never"]);
  });

  it("gives every index its own share: SHARDS is the Job's completions", () => {
    const { spec } = SHARDS;
    expect(spec.completionMode).toBe("Indexed");
    const container = spec.template.spec.containers[0]!;
    expect(Number(envOf(container).SHARDS)).toBe(spec.completions);
    expect(spec.parallelism).toBeLessThanOrEqual(spec.completions!);
    expect(container.command.join(" ")).toContain('--shard "$((JOB_COMPLETION_INDEX + 1))/$SHARDS"');
  });

  it("runs as written: each request sent once over the shards, and the assembly is one machine's", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake()]);
    const path = `${medbenchOnPath()}:${process.env.PATH}`;
    const { spec } = SHARDS;
    const pods = Array.from({ length: spec.completions! }, () => clone(fake));
    const container = spec.template.spec.containers[0]!;
    const runs = await Promise.all(
      pods.map((pod, index) =>
        runPod(pod, container, { ...remoteEnv(s3), PATH: path, JOB_COMPLETION_INDEX: String(index) }),
      ),
    );
    for (const run of runs) expect(run.exitCode, String(run.stderr)).toBe(0);
    const counts = [...fake.stats.bodies.values()];
    expect(counts.length).toBeGreaterThan(0);
    expect(counts.every((count) => count === 1)).toBe(true);
    const sent = fake.stats.requests;

    const assembler = clone(fake);
    const out = assembler.path("out");
    mkdirSync(out);
    const assembled = await runPod(assembler, ASSEMBLE.spec.template.spec.containers[0]!, {
      ...remoteEnv(s3),
      PATH: path,
      OUT: out,
    });
    expect(assembled.exitCode, String(assembled.stderr)).toBe(0);
    expect(warnings(String(assembled.stderr))).toEqual([]);
    expect(fake.stats.requests).toBe(sent);
    expect(assembler.exists("out/report.html") && assembler.exists("out/medbench.lock")).toBe(true);

    const solo = clone(fake);
    expect((await solo.buildAgainstFake()).exitCode).toBe(0);
    expect(results(assembler, "out/results/kor-surgical-robot-voice-command/fake_test-model")).toEqual(
      results(solo),
    );
  });
});

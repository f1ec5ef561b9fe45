// medbench: the command line. Commands print results on stdout, progress and errors on stderr.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DiagnosticError, formatDiagnostic } from "../spec/diagnostic.js";
import { BuildFailure } from "../runner/failure.js";
import type { BuildOptions } from "../runner/executor.js";
import { openProject } from "../runner/project.js";
import { ConsoleLogger, JsonLogger, QuietLogger, paint, useColour, type Logger } from "../log/loggers.js";
import type { SummaryRow } from "../runner/events.js";
import { medbenchVersion } from "../util/paths.js";
import { floatOption, intOption, parse, UsageError } from "./args.js";
import { metricEntries } from "../util/metrics.js";
// Each command loads what it needs when it runs, so that start-up stays close to Node's own.
import type { Json } from "../util/json.js";
import type { RngName } from "../stats/intervals.js";

const HELP: Record<string, string> = {
  main: `medbench ${"<version>"}: reproducible builds of medical LLM benchmarks

usage: medbench <command> [options]

commands:
  build SPEC        run the stages whose inputs changed; write results and medbench.lock
  status SPEC       every stage: fresh, stale (and why) or never built
  hash FILE         the spec_hash of a spec file or a medbench.kr task document
  diff A B          two versions of a spec (files or REV:path): hashes, changed fields, invalidated stages
  stats ci|paired   the interval procedures on JSONL files (as scripts/reference/stats_ref.py)
  compare-voice-command RUN_A RUN_B   paired comparison of two voice-command runs
  export RESULT -o F.tar.gz   pack a result with its spec, records and outputs (no data, no secret)
  verify BUNDLE|DIR [--live]  check a published result by replaying it (and, live, by re-sending it)
  report [SPEC...] -o F.html  one offline HTML page with every run's metrics, intervals and audit facts

medbench <command> --help for its options. Exit codes: 0 ok, 1 a build failed, 2 bad usage or a bad spec.`,
  build: `usage: medbench build SPEC [options]

  --model ROUTE/MODEL   the model under test (default: the spec's, e.g. medbench/prior)
  --judge ROUTE/MODEL   a judge model, for specs with a judge stage (repeatable; replaces the spec's list)
  --registry FILE       more model routes (repeatable; later files override)
  --data-dir DIR        a release you downloaded (or MEDBENCH_DATA_DIR); still checked against the pins
  --subset A,B          only these subsets (a partial run)
  --limit N             only the first N items of each subset (a partial run)
  --refresh STAGE       rerun this stage (name or kind) even if fresh; for model: send again (repeatable)
  --trust-changed       accept release files that changed since they were trusted on first use
  --frozen              fail instead of changing medbench.lock (for CI)
  --project DIR         the project root (default: the current directory)
  --json                events as JSON lines on stderr; one JSON summary as the last stdout line
  --quiet               warnings and errors only`,
  status: `usage: medbench status SPEC [--model ROUTE/MODEL] [--data-dir DIR] [--project DIR] [--json]`,
  hash: `usage: medbench hash FILE [--json]

  FILE is a spec file of specs/ or a task document (JSON or YAML, an object with a \`spec\` member).`,
  diff: `usage: medbench diff A B [--json]

  A and B are spec files or git revisions as REV:path (e.g. v1:specs/voice-command.yaml).`,
  stats: `usage:
  medbench stats ci --input F.jsonl --value KEY [--cluster KEY] [--resamples 1000] [--seed 0] [--rng numpy|python] [--level 0.95]
  medbench stats paired --a A.jsonl --b B.jsonl --value KEY --id KEY [--cluster KEY] [--resamples 2000] [--seed 0] [--rng python|numpy] [--level 0.95]`,
  export: `usage: medbench export RESULT -o FILE.tar.gz [--project DIR]

  RESULT is a results directory of a full build of this project (e.g. results/<slug>/<model>).`,
  verify: `usage: medbench verify BUNDLE|DIR [--data-dir DIR] [--live [--registry FILE]] [--json]

  Checks, in order: the bundled spec hashes to the recorded spec_hash (and how a local spec of the same
  task differs); every output matches its recorded hash; with --data-dir, the release matches the pins;
  then parse, score and bootstrap are replayed from the bundled replies and compared with the published
  metrics, intervals and verdicts. Exit 0 when identical, 1 with a table of differences.
  --live re-sends the recorded requests (replies kept apart from the published ones) and reports how many
  verdicts changed and where each metric lands against the published interval.`,
  report: `usage: medbench report [SPEC...] -o report.html [--project DIR]

  Every run under results/ of the given specs (default: every spec in specs/).`,
  "compare-voice-command": `usage: medbench compare-voice-command RUN_A RUN_B [--json]

  RUN_A and RUN_B are result directories of full voice-command runs (metrics.json and items.jsonl).
  Prints A - B in percentage points per subset with a cluster bootstrap over group (2,000 resamples,
  Python random seed 0) and the exact McNemar p on items.`,
};

function help(cmd: string): string {
  return (HELP[cmd] ?? HELP.main!).replace("<version>", medbenchVersion());
}

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    if (!cmd || cmd === "--help" || cmd === "-h" || cmd === "help") {
      process.stdout.write(help("main") + "\n");
      return cmd ? 0 : 2;
    }
    if (cmd === "--version") {
      process.stdout.write(medbenchVersion() + "\n");
      return 0;
    }
    if (rest.includes("--help") || rest.includes("-h")) {
      process.stdout.write(help(cmd) + "\n");
      return HELP[cmd] ? 0 : 2;
    }
    switch (cmd) {
      case "build":
        return await cmdBuild(rest);
      case "status":
        return await cmdStatus(rest);
      case "hash":
        return await cmdHash(rest);
      case "diff":
        return await cmdDiff(rest);
      case "stats":
        return await cmdStats(rest);
      case "compare-voice-command":
        return await cmdCompare(rest);
      case "export":
        return await cmdExport(rest);
      case "verify":
        return await cmdVerify(rest);
      case "report":
        return await cmdReport(rest);
      default:
        throw new UsageError(`unknown command ${JSON.stringify(cmd)}\n\n${help("main")}`);
    }
  } catch (e) {
    return report(e);
  }
}

function report(e: unknown): number {
  const c = paint(useColour(process.stderr));
  if (e instanceof DiagnosticError) {
    process.stderr.write(
      e.diagnostics
        .map(formatDiagnostic)
        .join("\n\n")
        .replace(/^error:/gm, c.red("error:")) + "\n",
    );
    return 2;
  }
  if (e instanceof UsageError) {
    process.stderr.write(`${c.red("error:")} ${e.message}\n`);
    return 2;
  }
  if (e instanceof BuildFailure) {
    process.stderr.write(
      `${c.red("error:")} ${["lock", "results"].includes(e.stage) ? "" : `stage ${e.stage}: `}${e.message}\n${e.fix ? `  fix: ${e.fix}\n` : ""}nothing was recorded: medbench.lock and earlier results are as they were\n`,
    );
    return 1;
  }
  process.stderr.write(
    `internal error (a bug in medbench; please report it):\n${e instanceof Error ? e.stack : String(e)}\n`,
  );
  return 1;
}

const BUILD_OPTIONS = {
  model: { type: "string" },
  judge: { type: "string", multiple: true },
  registry: { type: "string", multiple: true },
  "data-dir": { type: "string" },
  subset: { type: "string" },
  limit: { type: "string" },
  refresh: { type: "string", multiple: true },
  "trust-changed": { type: "boolean" },
  frozen: { type: "boolean" },
  project: { type: "string" },
  cache: { type: "string" },
  json: { type: "boolean" },
  quiet: { type: "boolean", short: "q" },
} as const;

function oneSpec(positionals: string[], cmd: string): string {
  if (positionals.length !== 1) throw new UsageError(`${cmd} takes one spec file\n\n${help(cmd)}`);
  return positionals[0]!;
}

function buildOptions(values: Record<string, unknown>): { opts: BuildOptions; vars: Record<string, Json> } {
  const project = openProject(
    (values.project as string | undefined) ?? process.cwd(),
    values.cache as string | undefined,
  );
  const limit = values.limit === undefined ? null : intOption(values.limit as string, "limit", 0);
  if (limit !== null && limit < 1) throw new UsageError("--limit takes a positive whole number");
  const vars: Record<string, Json> = {};
  if (values.model !== undefined) vars.model = values.model as string;
  if (values.judge !== undefined) vars.judges = values.judge as string[];
  if (values.subset !== undefined) vars.subset = values.subset as string;
  if (limit !== null) vars.limit = limit;
  const dataDir = (values["data-dir"] as string | undefined) ?? process.env.MEDBENCH_DATA_DIR;
  return {
    vars,
    opts: {
      project,
      dataDir: dataDir || undefined,
      frozen: Boolean(values.frozen),
      trustChanged: Boolean(values["trust-changed"]),
      refresh: (values.refresh as string[] | undefined) ?? [],
      env: process.env,
      registryFiles: (values.registry as string[] | undefined) ?? [],
      resultsSuffix: vars.subset !== undefined || vars.limit !== undefined ? ".partial" : "",
    },
  };
}

async function cmdBuild(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, BUILD_OPTIONS);
  const specPath = oneSpec(positionals, "build");
  const { opts, vars } = buildOptions(values);
  const { loadRuntime } = await import("./runtime.js");
  const { build } = await import("../runner/executor.js");
  const parsedSpecs = join(opts.project.cacheDir, "specs");
  const rt = await loadRuntime(specPath, vars, parsedSpecs);
  const logger: Logger = values.json
    ? new JsonLogger()
    : values.quiet
      ? new QuietLogger()
      : new ConsoleLogger();
  const report = await build(rt, opts, (e) => logger.log(e));
  (await import("../spec/load.js")).rememberParsedSpec(rt.spec, specPath, parsedSpecs);
  const summary = report.results ? summaryOf(join(report.results, "metrics.json")) : [];
  logger.log({
    type: "build-done",
    specHash: rt.spec.specHash,
    results: report.results,
    summary,
    lockChanged: report.lockChanged,
  });
  if (values.json) {
    process.stdout.write(
      JSON.stringify({
        spec_hash: rt.spec.specHash,
        stages: report.stages.map((s) => ({ name: s.name, kind: s.kind, status: s.status, key: s.key })),
        results: report.results,
      }) + "\n",
    );
  }
  return 0;
}

function summaryOf(metricsFile: string): SummaryRow[] {
  if (!existsSync(metricsFile)) return [];
  const m = JSON.parse(readFileSync(metricsFile, "utf8")) as {
    primary?: string;
    metrics?: Record<string, unknown>;
  };
  const rows: SummaryRow[] = metricEntries(m).map(([name, v]) => ({
    metric: name,
    value: v.value ?? null,
    lo: v.lo ?? null,
    hi: v.hi ?? null,
    n: v.n ?? 0,
    method: v.ci_method ?? "",
    unit: v.unit ?? "proportion",
  }));
  return [...rows.filter((r) => r.metric === m.primary), ...rows.filter((r) => r.metric !== m.primary)];
}

async function cmdStatus(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, BUILD_OPTIONS);
  const { opts, vars } = buildOptions(values);
  const { loadRuntime } = await import("./runtime.js");
  const { stageStates } = await import("../runner/status.js");
  const rt = await loadRuntime(oneSpec(positionals, "status"), vars, join(opts.project.cacheDir, "specs"));
  const states = await stageStates(rt, opts);
  if (values.json) {
    process.stdout.write(JSON.stringify({ spec_hash: rt.spec.specHash, stages: states }) + "\n");
    return 0;
  }
  const c = paint(useColour(process.stdout));
  process.stdout.write(`${rt.spec.path}  spec_hash ${rt.spec.specHash}\n`);
  for (const s of states) {
    const label =
      s.state === "fresh"
        ? c.green("fresh      ")
        : s.state === "stale"
          ? c.yellow("stale      ")
          : c.dim("never built");
    process.stdout.write(`  ${label} ${s.name} ${c.dim(`(${s.kind})`)}\n`);
    if (s.state !== "fresh") for (const r of s.reasons) process.stdout.write(`      ${r}\n`);
  }
  return 0;
}

async function cmdHash(argv: string[]): Promise<number> {
  const { hashDocument } = await import("../spec/load.js");
  const { values, positionals } = parse(argv, { json: { type: "boolean" } });
  if (positionals.length !== 1) throw new UsageError(`hash takes one file\n\n${help("hash")}`);
  const { specHash, published } = hashDocument(positionals[0]!);
  if (values.json)
    process.stdout.write(
      JSON.stringify({
        spec_hash: specHash,
        published: published ?? null,
        matches: published ? published === specHash : null,
      }) + "\n",
    );
  else process.stdout.write(specHash + "\n");
  if (published && published !== specHash) {
    process.stderr.write(
      `warning: the document records spec_hash ${published}, but its spec hashes to ${specHash}\n`,
    );
    return 1;
  }
  return 0;
}

async function cmdDiff(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { json: { type: "boolean" }, project: { type: "string" } });
  if (positionals.length !== 2) throw new UsageError(`diff takes two specs\n\n${help("diff")}`);
  const { diffSpecs } = await import("./diff.js");
  const d = await diffSpecs(
    positionals[0]!,
    positionals[1]!,
    (values.project as string | undefined) ?? process.cwd(),
  );
  if (values.json) {
    process.stdout.write(JSON.stringify(d) + "\n");
    return 0;
  }
  const c = paint(useColour(process.stdout));
  const out: string[] = [
    `A ${d.a.label}  spec_hash ${d.a.spec_hash}`,
    `B ${d.b.label}  spec_hash ${d.b.spec_hash}${d.a.spec_hash === d.b.spec_hash ? c.dim("  (same)") : ""}`,
  ];
  out.push("", d.fields.length ? "changed fields:" : "no field changed");
  for (const f of d.fields)
    out.push(
      `  ${f.path}: ${c.red(JSON.stringify(f.from) ?? "(none)")} -> ${c.green(JSON.stringify(f.to) ?? "(none)")}`,
    );
  out.push("", d.stages.length ? "stages invalidated:" : "no stage invalidated");
  for (const s of d.stages) out.push(`  ${s.name}: ${s.reasons.join("; ")}`);
  process.stdout.write(out.join("\n") + "\n");
  return 0;
}

async function cmdStats(argv: string[]): Promise<number> {
  const { statsCi, statsPaired } = await import("./stats.js");
  const [sub, ...rest] = argv;
  const { values, positionals } = parse(rest, {
    input: { type: "string" },
    a: { type: "string" },
    b: { type: "string" },
    value: { type: "string" },
    id: { type: "string" },
    cluster: { type: "string" },
    resamples: { type: "string" },
    seed: { type: "string" },
    rng: { type: "string" },
    level: { type: "string" },
  });
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}\n\n${help("stats")}`);
  const need = (k: string) => {
    const v = values[k as keyof typeof values];
    if (typeof v !== "string") throw new UsageError(`stats ${sub} needs --${k}\n\n${help("stats")}`);
    return v;
  };
  const rng = (values.rng ?? (sub === "paired" ? "python" : "numpy")) as RngName;
  if (rng !== "numpy" && rng !== "python")
    throw new UsageError(`--rng is numpy or python, not ${JSON.stringify(rng)}`);
  const level = floatOption(values.level, "level", 0.95);
  if (!(level > 0 && level < 1)) throw new UsageError("--level is between 0 and 1, e.g. 0.95");
  const args = {
    resamples: intOption(values.resamples, "resamples", sub === "paired" ? 2000 : 1000),
    seed: intOption(values.seed, "seed", 0),
    rng,
    level,
    value: need("value"),
    cluster: values.cluster,
  };
  if (args.resamples < 1) throw new UsageError("--resamples must be at least 1");
  if (args.seed < 0) throw new UsageError("--seed must be 0 or more");
  let out: object;
  if (sub === "ci") out = statsCi(need("input"), args);
  else if (sub === "paired") out = statsPaired(need("a"), need("b"), need("id"), args);
  else throw new UsageError(`stats takes ci or paired\n\n${help("stats")}`);
  process.stdout.write(JSON.stringify(out) + "\n");
  return 0;
}

async function cmdCompare(argv: string[]): Promise<number> {
  const { compareVoiceCommand } = await import("./compare.js");
  const { values, positionals } = parse(argv, { json: { type: "boolean" } });
  if (positionals.length !== 2)
    throw new UsageError(
      `compare-voice-command takes two result directories\n\n${help("compare-voice-command")}`,
    );
  const result = compareVoiceCommand(positionals[0]!, positionals[1]!);
  if (values.json) {
    process.stdout.write(JSON.stringify(result) + "\n");
    return 0;
  }
  const lines = [
    `A ${result.a.dir}  (${result.a.model})`,
    `B ${result.b.dir}  (${result.b.model})`,
    `spec_hash ${result.spec_hash}`,
    "",
  ];
  lines.push(
    [
      "subset".padEnd(12),
      "A %".padStart(7),
      "B %".padStart(7),
      "A-B pp".padStart(8),
      "95% CI".padStart(17),
      "McNemar p".padStart(10),
      "b",
      "c",
    ].join("  "),
  );
  for (const r of result.rows) {
    lines.push(
      [
        r.subset.padEnd(12),
        (100 * r.a).toFixed(1).padStart(7),
        (100 * r.b).toFixed(1).padStart(7),
        r.diff_pp.toFixed(1).padStart(8),
        `${r.lo.toFixed(1)}–${r.hi.toFixed(1)}`.padStart(17),
        r.mcnemar_p.toPrecision(3).padStart(10),
        String(r.b_count),
        String(r.c_count),
      ].join("  "),
    );
  }
  process.stdout.write(lines.join("\n") + "\n");
  return 0;
}

async function cmdExport(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...BUILD_OPTIONS, output: { type: "string", short: "o" } });
  if (positionals.length !== 1 || !values.output)
    throw new UsageError(`export takes a result directory and -o FILE.tar.gz\n\n${help("export")}`);
  const { opts } = buildOptions(values);
  const { exportResult } = await import("../bundle/export.js");
  const out = await exportResult(positionals[0]!, values.output as string, opts);
  process.stdout.write(`${out}\n`);
  return 0;
}

async function cmdVerify(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...BUILD_OPTIONS, live: { type: "boolean" } });
  if (positionals.length !== 1) throw new UsageError(`verify takes one bundle\n\n${help("verify")}`);
  const { opts } = buildOptions(values);
  const { verifyBundle } = await import("../bundle/verify.js");
  const r = await verifyBundle(positionals[0]!, {
    project: opts.project,
    dataDir: opts.dataDir,
    live: Boolean(values.live),
    registryFiles: opts.registryFiles,
    env: process.env,
  });
  if (values.json) {
    process.stdout.write(JSON.stringify(r) + "\n");
    return r.ok ? 0 : 1;
  }
  const c = paint(useColour(process.stdout));
  const out: string[] = [`verify ${r.bundle}: ${r.slug}, spec_hash ${r.spec_hash}`];
  for (const ch of r.checks) {
    const mark = ch.ok === true ? c.green("ok  ") : ch.ok === false ? c.red("FAIL") : c.dim("--  ");
    out.push(`  ${mark} ${ch.name}: ${ch.lines[0] ?? ""}`, ...ch.lines.slice(1).map((l) => `         ${l}`));
  }
  if (r.differences.length) {
    out.push("", "differences (published -> recomputed):");
    for (const d of r.differences.slice(0, 50))
      out.push(`  ${d.what}: ${JSON.stringify(d.published)} -> ${JSON.stringify(d.recomputed)}`);
    if (r.differences.length > 50) out.push(`  … and ${r.differences.length - 50} more (--json for all)`);
  }
  if (r.live) {
    out.push("", "live rerun (replies kept apart from the published ones):");
    for (const d of r.live.request_differences)
      out.push(
        `  ${c.yellow("warning")} ${d.stage} sent ${d.path} = ${JSON.stringify(d.sent)}, recorded ${JSON.stringify(d.recorded)} (the route here differs from the published one)`,
      );
    for (const v of r.live.verdicts.filter((x) => x.changed > 0 || x.key === "exact")) {
      out.push(
        `  ${v.key} on ${v.subset}: ${v.changed} of ${v.n} verdicts differed (${v.to_true} to true, ${v.to_false} to false)`,
      );
    }
    for (const m of r.live.metrics) {
      const f = (x: number | null) => (x === null ? "–" : x.toFixed(4));
      out.push(
        `  ${m.metric}: live ${f(m.live)}, published ${f(m.published)} [${f(m.lo)}, ${f(m.hi)}] ${m.inside === null ? "" : m.inside ? "inside" : c.yellow("outside")}`,
      );
    }
  }
  out.push("", r.ok ? c.green("verified: the published result is reproduced") : c.red("NOT verified"));
  process.stdout.write(out.join("\n") + "\n");
  return r.ok ? 0 : 1;
}

async function cmdReport(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, {
    output: { type: "string", short: "o" },
    project: { type: "string" },
  });
  if (!values.output) throw new UsageError(`report needs -o FILE.html\n\n${help("report")}`);
  const { writeReport } = await import("../report/report.js");
  const out = await writeReport(
    positionals,
    values.output,
    (values.project as string | undefined) ?? process.cwd(),
  );
  process.stdout.write(`${out.file}: ${out.runs} runs of ${out.tasks} tasks\n`);
  return 0;
}

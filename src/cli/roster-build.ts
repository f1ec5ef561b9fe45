// `build SPEC --roster`: one build per run of the spec's check roster, then the check. Each run is a
// `medbench build --model M --json` process of its own; runs on different routes proceed at the same time
// and runs on one route one after another, so that no route ever has more requests in flight (or per
// minute) than its own limits. One display for the whole roster: a line as each run starts and ends, and on
// a terminal one line of progress over the runs under way.
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { installRoot } from "../util/paths.js";
import { splitModel } from "../model/registry.js";
import { UsageError } from "../errors.js";

export interface RosterJob {
  label: string; // "roster 3/8: weak_reference openai/gpt-oss-20b"
  name: string; // "weak_reference openai/gpt-oss-20b", on the progress line
  model: string;
}

interface RunState {
  job: RosterJob;
  progress: string; // "model 120/500", or "" before the first progress event
}

/** The jobs grouped by route (ROUTE of ROUTE/MODEL), in roster order within each group. */
function byRoute(jobs: RosterJob[]): RosterJob[][] {
  const groups = new Map<string, RosterJob[]>();
  for (const job of jobs) {
    const { route } = splitModel(job.model);
    groups.set(route, [...(groups.get(route) ?? []), job]);
  }
  return [...groups.values()];
}

class RosterDisplay {
  private readonly running = new Set<RunState>();
  private footer = false;

  constructor(
    private readonly quiet: boolean,
    private readonly out: NodeJS.WriteStream = process.stderr,
  ) {}

  say(line: string): void {
    if (this.quiet) return;
    this.clearFooter();
    this.out.write(`${line}\n`);
    this.drawFooter();
  }

  started(state: RunState): void {
    this.running.add(state);
    this.say(state.job.label);
  }

  ended(state: RunState, line: string): void {
    this.running.delete(state);
    this.say(line);
  }

  /** A run's error lines; the same error as an earlier run's (one bad registry fails every run) is named,
   *  not printed again. */
  failure(label: string, lines: string[]): void {
    const text = lines.join("\n");
    const first = this.failures.get(text);
    if (first !== undefined) return this.say(`  the same error as ${first}`);
    this.failures.set(text, label);
    for (const line of lines) this.say(`  ${line}`);
  }
  private readonly failures = new Map<string, string>();

  progressed(): void {
    if (this.quiet) return;
    this.clearFooter();
    this.drawFooter();
  }

  private drawFooter(): void {
    if (!this.out.isTTY || this.running.size === 0) return;
    const parts = [...this.running].map((state) => {
      return `${state.job.name}${state.progress ? ` ${state.progress}` : ""}`;
    });
    const line = `  … ${parts.join(" · ")}`;
    this.out.write(line.slice(0, (this.out.columns ?? 120) - 1));
    this.footer = true;
  }

  private clearFooter(): void {
    if (this.footer) this.out.write("\r\x1b[K");
    this.footer = false;
  }
}

/** One run as a child process; resolves to its exit code. JSON mode passes its lines through whole. */
function buildOne(args: string[], state: RunState, display: RosterDisplay, json: boolean): Promise<number> {
  const bin = resolve(installRoot(), "bin/medbench.js");
  const childArgs = [bin, "build", ...args, "--model", state.job.model, ...(json ? [] : ["--json"])];
  const child = spawn(process.execPath, childArgs, { stdio: ["ignore", "pipe", "pipe"] });
  const said: string[] = [];
  let results = "";
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (json) process.stdout.write(`${line}\n`);
    else results = resultsOf(line) ?? results;
  });
  createInterface({ input: child.stderr! }).on("line", (line) => {
    if (json) return void process.stderr.write(`${line}\n`);
    const event = eventOf(line);
    if (event?.type === "progress") {
      state.progress = `${event.stage} ${event.done}/${event.total}`;
      display.progressed();
    } else if (event?.type === "warning") display.say(`  ${state.job.label}: warning: ${event.message}`);
    else if (!event && line.trim()) said.push(line);
  });
  return new Promise((done) => {
    child.on("close", (code) => {
      const exit = code ?? 1;
      const outcome = exit === 0 ? `done${results ? ` (${results})` : ""}` : `failed (exit ${exit})`;
      display.ended(state, `${state.job.label}: ${outcome}`);
      if (exit !== 0) display.failure(state.job.label, said);
      done(exit);
    });
  });
}

function eventOf(
  line: string,
): { type?: string; stage?: string; done?: number; total?: number; message?: string } | null {
  if (!line.startsWith("{")) return null;
  try {
    return JSON.parse(line) as { type?: string };
  } catch {
    return null;
  }
}

function resultsOf(line: string): string | null {
  const summary = eventOf(line) as { results?: unknown } | null;
  return typeof summary?.results === "string" ? summary.results : null;
}

/**
 * Builds the roster's runs, route groups at the same time; `args`: the build's other options. Returns each
 * run's exit code, in roster order.
 */
export async function buildRosterRuns(
  jobs: RosterJob[],
  args: string[],
  { quiet, json }: { quiet: boolean; json: boolean },
): Promise<number[]> {
  const display = new RosterDisplay(quiet || json);
  const codes = new Map<RosterJob, number>();
  await Promise.all(
    byRoute(jobs).map(async (group) => {
      for (const job of group) {
        const state: RunState = { job, progress: "" };
        display.started(state);
        codes.set(job, await buildOne(args, state, display, json));
      }
    }),
  );
  return jobs.map((job) => codes.get(job)!);
}

/**
 * `build SPEC --roster`: one build per run of the spec's check roster, each with its model and the other
 * options given (`argv`, `values`: the command's), then the check. A run that fails or is incomplete does
 * not stop the others (the check names it; exit 1); a usage or spec mistake is exit 2.
 */
export async function buildRoster(
  specPath: string,
  argv: string[],
  values: Record<string, unknown>,
): Promise<number> {
  if (values.model !== undefined || values.shard !== undefined)
    throw new UsageError("--roster builds each model of the roster: drop --model and --shard");
  const { loadRuntime } = await import("../load/runtime.js");
  const { declaredCheck } = await import("../check/declare.js");
  const spec = (await loadRuntime(specPath, {})).spec;
  const decl = declaredCheck(spec);
  if (!decl)
    throw new UsageError(
      `${specPath} declares no check, so no roster: add a \`check:\` block (docs/check.md)`,
    );
  const rest = argv.filter((arg) => arg !== "--roster");
  const jobs = decl.roster.map((entry, i) => ({
    label: `roster ${i + 1}/${decl.roster.length}: ${entry.role} ${entry.model}`,
    name: `${entry.role} ${entry.model}`,
    model: entry.model,
  }));
  const codes = await buildRosterRuns(jobs, rest, {
    quiet: Boolean(values.quiet),
    json: Boolean(values.json),
  });
  if (codes.includes(2)) return 2; // a usage or spec mistake: every run meets it
  const failed = codes.some((code) => code !== 0); // an incomplete run is still checked (the check names it)
  const check = (await import("./commands/check.js")).command;
  const project = values.project === undefined ? [] : ["--project", values.project as string];
  const registries = ((values.registry as string[] | undefined) ?? []).flatMap((file) => [
    "--registry",
    file,
  ]);
  const verdict = await check.run([specPath, ...project, ...registries, ...(values.json ? ["--json"] : [])]);
  return Math.max(verdict, failed ? 1 : 0);
}

// Renderers of build events: console (progress and a summary table), quiet, JSON lines.
import type { BuildEvent, SummaryRow } from "../contract/events.js";
import { unreachable } from "../util/json.js";

export interface Logger {
  log(e: BuildEvent): void;
}

export function useColour(stream: NodeJS.WriteStream, env = process.env): boolean {
  return Boolean(stream.isTTY) && env.NO_COLOR === undefined && env.TERM !== "dumb";
}

export function paint(on: boolean) {
  const wrap = (code: string) => (text: string) => (on ? `\x1b[${code}m${text}\x1b[0m` : text);
  return {
    dim: wrap("2"),
    green: wrap("32"),
    yellow: wrap("33"),
    red: wrap("31"),
    bold: wrap("1"),
    cyan: wrap("36"),
  };
}

export class ConsoleLogger implements Logger {
  private readonly c: ReturnType<typeof paint>;
  private progressLine = false;
  private readonly started = new Map<string, { t: number; done: number }>();
  /** What the build did and its metrics go to `result` (stdout: `medbench build > out.txt` keeps them);
   *  progress, warnings and failures to `out` (stderr). */
  constructor(
    private readonly out: NodeJS.WriteStream = process.stderr,
    env = process.env,
    private readonly result: NodeJS.WriteStream = process.stdout,
  ) {
    this.c = paint(useColour(out, env) && useColour(result, env));
  }
  private write(text: string, to: NodeJS.WriteStream = this.out): void {
    if (this.progressLine) {
      this.out.write("\r\x1b[K");
      this.progressLine = false;
    }
    to.write(text + "\n");
  }
  private say(text: string): void {
    this.write(text, this.result);
  }
  log(e: BuildEvent): void {
    const colours = this.c;
    switch (e.type) {
      case "build-start":
        this.say(`${colours.bold(e.spec)}  spec_hash ${colours.dim(e.specHash)}`);
        break;
      case "stage-start": {
        // Why it runs (status's words): a few reasons, the rest counted.
        const reasons = e.reasons ?? [];
        const why =
          reasons.length > 3 ? [...reasons.slice(0, 3), `and ${reasons.length - 3} more`] : reasons;
        const kind = colours.dim(`(${e.kind})`);
        this.say(`  ${colours.cyan("run  ")} ${e.stage} ${kind}${why.length ? `: ${why.join("; ")}` : ""}`);
        break;
      }
      case "stage-done":
        this.say(
          e.status === "fresh"
            ? `  ${colours.dim("fresh")} ${e.stage}`
            : `  ${colours.green("done ")} ${e.stage} ${colours.dim(`${(e.ms / 1000).toFixed(2)} s`)}`,
        );
        break;
      case "stage-failed":
        this.write(`  ${colours.red("FAIL ")} ${e.stage}: ${e.message.split("\n")[0]}`);
        break;
      case "progress": {
        const first = this.started.get(e.stage) ?? { t: Date.now(), done: e.done };
        this.started.set(e.stage, first);
        const secs = (Date.now() - first.t) / 1000;
        const rate = secs > 0 ? (e.done - first.done) / secs : 0;
        const eta = rate > 0 ? ` ${rate.toFixed(1)}/s, ETA ${Math.ceil((e.total - e.done) / rate)} s` : "";
        const retries = e.retries ? `, ${e.retries} retries` : "";
        const errors = e.errors ? `, ${e.errors} errors` : "";
        const line = `  ${colours.dim("…")} ${e.stage} ${e.done}/${e.total}${eta}${retries}${errors}`;
        if (this.out.isTTY) {
          this.out.write(`\r\x1b[K${line}`);
          this.progressLine = true;
        } else this.write(line);
        break;
      }
      case "warning":
        this.write(`  ${colours.yellow("warning")} ${e.stage ? `${e.stage}: ` : ""}${e.message}`);
        break;
      case "notice":
        this.write(`  ${colours.yellow("notice")} ${e.message}`);
        break;
      case "info":
        this.write(`  ${colours.dim("info")} ${e.stage ? `${e.stage}: ` : ""}${e.message}`);
        break;
      case "build-done":
        if (e.summary.length) this.say("\n" + summaryTable(e.summary));
        if (e.results) this.say(`\nresults: ${e.results}`);
        if (e.lockChanged) this.say(colours.dim("medbench.lock updated"));
        break;
      default:
        unreachable(e);
    }
  }
}

export class QuietLogger implements Logger {
  constructor(private readonly out: NodeJS.WriteStream = process.stderr) {}
  log(e: BuildEvent): void {
    if (e.type === "notice") this.out.write(`notice: ${e.message}\n`);
    if (e.type === "warning" || e.type === "stage-failed")
      this.out.write(`${e.type === "warning" ? "warning" : "failed"}: ${e.stage ?? ""} ${e.message}\n`);
  }
}

export class JsonLogger implements Logger {
  constructor(private readonly out: NodeJS.WriteStream = process.stderr) {}
  log(e: BuildEvent): void {
    this.out.write(JSON.stringify(e) + "\n");
  }
}

export function summaryTable(rows: SummaryRow[]): string {
  const table = [
    ["metric", "value", "95% CI", "n", "method"],
    ...rows.map((row) => {
      const fmt = (value: number | null) =>
        value === null ? "" : row.unit === "score" ? value.toFixed(2) : `${(100 * value).toFixed(1)}%`;
      return [
        row.metric,
        fmt(row.value),
        row.lo === null ? "" : `${fmt(row.lo)}–${fmt(row.hi)}`,
        String(row.n),
        row.method,
      ];
    }),
  ];
  const widths = table[0]!.map((_cell, i) => Math.max(...table.map((row) => row[i]!.length)));
  return table
    .map((row) =>
      row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  "),
    )
    .join("\n");
}

/** The logger a command's --json and --quiet choose. */
export function loggerFor(flags: { json?: unknown; quiet?: unknown }): Logger {
  if (flags.json) return new JsonLogger();
  return flags.quiet ? new QuietLogger() : new ConsoleLogger();
}

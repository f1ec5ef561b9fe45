// Renderers of build events: console (progress and a summary table), quiet, JSON lines.
import type { BuildEvent, SummaryRow } from "../runner/events.js";
import { unreachable } from "../util/json.js";

export interface Logger {
  log(e: BuildEvent): void;
}

export function useColour(stream: NodeJS.WriteStream, env = process.env): boolean {
  return Boolean(stream.isTTY) && env.NO_COLOR === undefined && env.TERM !== "dumb";
}

export function paint(on: boolean) {
  const wrap = (code: string) => (s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);
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
  private write(s: string, to: NodeJS.WriteStream = this.out): void {
    if (this.progressLine) {
      this.out.write("\r\x1b[K");
      this.progressLine = false;
    }
    to.write(s + "\n");
  }
  private say(s: string): void {
    this.write(s, this.result);
  }
  log(e: BuildEvent): void {
    const c = this.c;
    switch (e.type) {
      case "build-start":
        this.say(`${c.bold(e.spec)}  spec_hash ${c.dim(e.specHash)}`);
        break;
      case "stage-start": {
        // Why it runs (status's words): a few reasons, the rest counted.
        const r = e.reasons ?? [];
        const why = r.length > 3 ? [...r.slice(0, 3), `and ${r.length - 3} more`] : r;
        this.say(
          `  ${c.cyan("run  ")} ${e.stage} ${c.dim(`(${e.kind})`)}${why.length ? `: ${why.join("; ")}` : ""}`,
        );
        break;
      }
      case "stage-done":
        this.say(
          e.status === "fresh"
            ? `  ${c.dim("fresh")} ${e.stage}`
            : `  ${c.green("done ")} ${e.stage} ${c.dim(`${(e.ms / 1000).toFixed(2)} s`)}`,
        );
        break;
      case "stage-failed":
        this.write(`  ${c.red("FAIL ")} ${e.stage}: ${e.message.split("\n")[0]}`);
        break;
      case "progress": {
        const first = this.started.get(e.stage) ?? { t: Date.now(), done: e.done };
        this.started.set(e.stage, first);
        const secs = (Date.now() - first.t) / 1000;
        const rate = secs > 0 ? (e.done - first.done) / secs : 0;
        const eta = rate > 0 ? ` ${rate.toFixed(1)}/s, ETA ${Math.ceil((e.total - e.done) / rate)} s` : "";
        const retries = e.retries ? `, ${e.retries} retries` : "";
        const errors = e.errors ? `, ${e.errors} errors` : "";
        const line = `  ${c.dim("…")} ${e.stage} ${e.done}/${e.total}${eta}${retries}${errors}`;
        if (this.out.isTTY) {
          this.out.write(`\r\x1b[K${line}`);
          this.progressLine = true;
        } else this.write(line);
        break;
      }
      case "warning":
        this.write(`  ${c.yellow("warning")} ${e.stage ? `${e.stage}: ` : ""}${e.message}`);
        break;
      case "notice":
        this.write(`  ${c.yellow("notice")} ${e.message}`);
        break;
      case "info":
        this.write(`  ${c.dim("info")} ${e.stage ? `${e.stage}: ` : ""}${e.message}`);
        break;
      case "build-done":
        if (e.summary.length) this.say("\n" + summaryTable(e.summary));
        if (e.results) this.say(`\nresults: ${e.results}`);
        if (e.lockChanged) this.say(c.dim("medbench.lock updated"));
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
    ...rows.map((r) => {
      const fmt = (v: number | null) =>
        v === null ? "" : r.unit === "score" ? v.toFixed(2) : `${(100 * v).toFixed(1)}%`;
      return [
        r.metric,
        fmt(r.value),
        r.lo === null ? "" : `${fmt(r.lo)}–${fmt(r.hi)}`,
        String(r.n),
        r.method,
      ];
    }),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  return table
    .map((row) =>
      row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  "),
    )
    .join("\n");
}

// User-facing errors as values: what went wrong, where (file:line:column), and how to fix it.

export interface Diagnostic {
  file: string;
  line?: number; // 1-based
  column?: number; // 1-based
  length?: number; // characters to underline
  key?: string; // dotted path of the offending key, e.g. stages.score.kind
  message: string;
  fix?: string;
  sourceLine?: string;
}

export class DiagnosticError extends Error {
  constructor(readonly diagnostics: Diagnostic[]) {
    super(diagnostics.map((d) => d.message).join("; "));
  }
}

/** Fails with a user-facing diagnostic (caught by the CLI, never printed as a stack trace). */
export function fail(d: Diagnostic): never {
  throw new DiagnosticError([d]);
}

export function formatDiagnostic(d: Diagnostic): string {
  const where = d.line ? `${d.file}:${d.line}:${d.column ?? 1}` : d.file;
  const key = d.key ? ` ${d.key}:` : "";
  const lines = [`error: ${where}:${key} ${d.message}`];
  if (d.line && d.sourceLine !== undefined) {
    const gutter = String(d.line);
    lines.push(`  ${gutter} | ${d.sourceLine}`);
    const pad = " ".repeat(Math.max(0, (d.column ?? 1) - 1));
    lines.push(`  ${" ".repeat(gutter.length)} | ${pad}${"^".repeat(Math.max(1, d.length ?? 1))}`);
  }
  if (d.fix) lines.push(`  fix: ${d.fix}`);
  return lines.join("\n");
}

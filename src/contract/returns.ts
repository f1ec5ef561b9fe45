// What a task's functions return, checked against the contract (src/contract/task.ts) before any stage
// writes it: a task author's bug (a NaN, a value of 5 in a proportion, two requests of one id, no metric)
// must be refused, never published as a number. Each check gives the problems as sentences, empty when none.

/** The contract versions this medbench runs. */
export const CONTRACT_VERSIONS: readonly number[] = [2];

/** Where a value first breaks the rule, as a short phrase; at most this many are listed. */
const MAX_LISTED = 3;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const shown = (value: unknown): string =>
  typeof value === "number"
    ? String(value)
    : value === undefined
      ? "undefined"
      : (JSON.stringify(value) ?? String(value));

/** The first few problems, and how many more there were. */
function listed(problems: string[]): string[] {
  if (problems.length <= MAX_LISTED) return problems;
  return [...problems.slice(0, MAX_LISTED), `and ${problems.length - MAX_LISTED} more`];
}

/** buildRequests: a list of at least one request, each an object with a non-empty string id, no id twice. */
export function requestProblems(value: unknown): string[] {
  if (!Array.isArray(value)) return [`returned ${shown(value)}, not a list of requests`];
  if (value.length === 0) return ["returned no request (an empty list): a run of nothing measures nothing"];
  const out: string[] = [];
  const seen = new Set<string>();
  value.forEach((request: unknown, i) => {
    const id = isObject(request) ? request.id : undefined;
    if (!isObject(request)) out.push(`request ${i} is ${shown(request)}, not an object`);
    else if (typeof id !== "string" || id === "") out.push(`request ${i} has the id ${shown(id)}`);
    else if (seen.has(id)) out.push(`the id ${JSON.stringify(id)} is given to two requests`);
    else seen.add(id);
  });
  return listed(out);
}

/** score (and rescore): items, paired and tables present; at least one metric, each with finite row values
 *  in its unit's range; the spec's primary metric among them (`primary`, when the spec names one). */
export function scoreProblems(value: unknown, primary: string | null): string[] {
  if (!isObject(value)) return [`returned ${shown(value)}, not { items, metrics, paired, tables }`];
  const out: string[] = [];
  if (!Array.isArray(value.items)) out.push(`returned items ${shown(value.items)}, not a list`);
  if (!Array.isArray(value.paired)) out.push(`returned paired ${shown(value.paired)}, not a list`);
  if (!isObject(value.tables)) out.push(`returned tables ${shown(value.tables)}, not an object`);
  if (Array.isArray(value.items)) out.push(...idProblems(value.items as unknown[], "item"));
  if (Array.isArray(value.paired)) out.push(...pairedProblems(value.paired as unknown[]));
  const metrics = value.metrics;
  if (!Array.isArray(metrics) || metrics.length === 0)
    return [...out, `returned metrics ${shown(metrics)}: a run needs at least one metric`];
  const names = new Set<string>();
  for (const metric of metrics as unknown[]) {
    if (!isObject(metric) || typeof metric.name !== "string" || metric.name === "") {
      out.push(`a metric is ${shown(metric)}, without a name`);
      continue;
    }
    if (names.has(metric.name)) out.push(`the metric ${metric.name} is returned twice`);
    names.add(metric.name);
    out.push(...metricProblems(metric));
  }
  if (primary !== null && !names.has(primary))
    out.push(
      `returned no metric ${primary}, the spec's primary_metric ` +
        `(its metrics: ${[...names].join(", ") || "none"})`,
    );
  return listed(out);
}

const UNITS: Record<string, [number, number]> = {
  proportion: [0, 1],
  score: [-Infinity, Infinity],
};

/** One metric's unit and rows: each row a finite value, and finite fields. A mean's rows are its values, so
 *  each is within the unit's range; a statistic's rows are what it reads, and may be counts. */
function metricProblems(metric: Record<string, unknown>): string[] {
  const unit = metric.unit ?? "proportion";
  const known = typeof unit === "string" ? UNITS[unit] : undefined;
  if (!known) return [`metric ${String(metric.name)} has the unit ${shown(unit)} (use proportion or score)`];
  const range = metric.statistic === undefined || metric.statistic === "mean" ? known : UNITS.score!;
  if (!Array.isArray(metric.rows))
    return [`metric ${String(metric.name)} has rows ${shown(metric.rows)}, not a list`];
  const out: string[] = idProblems(metric.rows as unknown[], `metric ${String(metric.name)}: row`);
  for (const row of metric.rows as unknown[]) {
    const at = `metric ${String(metric.name)}, row ${isObject(row) ? shown(row.id) : shown(row)}`;
    if (!isObject(row)) {
      out.push(`${at}: not an object`);
      continue;
    }
    if (typeof row.cluster !== "string") out.push(`${at}: cluster ${shown(row.cluster)} is not a string`);
    if (row.fields !== undefined && !isObject(row.fields))
      out.push(`${at}: fields ${shown(row.fields)} is not an object of numbers`);
    const value = row.value;
    if (typeof value !== "number" || !Number.isFinite(value))
      out.push(`${at}: value ${shown(value)} is not a finite number`);
    else if (value < range[0] || value > range[1])
      out.push(`${at}: value ${value} is outside [${range[0]}, ${range[1]}], the range of a ${unit}`);
    for (const [name, field] of Object.entries(isObject(row.fields) ? row.fields : {}))
      if (typeof field !== "number" || !Number.isFinite(field))
        out.push(`${at}: field ${name} ${shown(field)} is not a finite number`);
    if (out.length > MAX_LISTED) break;
  }
  return out;
}

/** Records that carry an id (items, a metric's rows): each a non-empty string, none twice. */
function idProblems(records: unknown[], what: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  records.forEach((record, i) => {
    const id = isObject(record) ? record.id : undefined;
    if (!isObject(record)) return;
    if (typeof id !== "string" || id === "") out.push(`${what} ${i} has the id ${shown(id)}, not a string`);
    else if (seen.has(id)) out.push(`the id ${JSON.stringify(id)} is given to two of ${what}s`);
    else seen.add(id);
  });
  return listed(out);
}

/** Paired rows: per side, rows of a string id, a finite value and a string cluster. */
function pairedProblems(paired: unknown[]): string[] {
  const out: string[] = [];
  for (const pair of paired) {
    if (!isObject(pair)) {
      out.push(`a paired comparison is ${shown(pair)}, not an object`);
      continue;
    }
    for (const side of ["a", "b"] as const) {
      const rows = pair[side];
      const at = `paired ${shown(pair.name)}, side ${side}`;
      if (!Array.isArray(rows)) {
        out.push(`${at}: rows ${shown(rows)}, not a list`);
        continue;
      }
      out.push(...idProblems(rows as unknown[], `${at}: row`));
      for (const row of rows as unknown[])
        if (!isObject(row) || typeof row.value !== "number" || !Number.isFinite(row.value))
          out.push(`${at}: row ${shown(row)} has no finite value`);
        else if (typeof row.cluster !== "string")
          out.push(`${at}, row ${shown(row.id)}: cluster ${shown(row.cluster)} is not a string`);
    }
  }
  return listed(out);
}

/** A JSON value (what a record holds): no undefined, function, NaN or infinity anywhere in it. */
function jsonProblem(value: unknown, at: string): string | null {
  if (value === null || typeof value === "string" || typeof value === "boolean") return null;
  if (typeof value === "number") return Number.isFinite(value) ? null : `${at} is ${value}`;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = jsonProblem(value[i], `${at}[${i}]`);
      if (problem) return problem;
    }
    return null;
  }
  if (isObject(value) && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [name, field] of Object.entries(value)) {
      if (field === undefined) continue; // a key JSON leaves out, as JSON.stringify does
      const problem = jsonProblem(field, `${at}.${name}`);
      if (problem) return problem;
    }
    return null;
  }
  const what =
    value === undefined ? "undefined" : typeof value === "object" ? "no plain object" : typeof value;
  return `${at} is ${what}`;
}

/** parseReply: `{ ok, value, error? }`: ok a boolean, value a JSON value (null when there is none), error a
 *  string when given. */
export function parseProblems(value: unknown): string[] {
  if (!isObject(value))
    return [`returned ${shown(value)}, not { ok, value } (return { ok: false, value: null } for no answer)`];
  const out: string[] = [];
  if (typeof value.ok !== "boolean") out.push(`returned ok ${shown(value.ok)}, not true or false`);
  const problem = jsonProblem(value.value, "value");
  if (problem) out.push(`returned ${problem}, not a JSON value (null when there is none)`);
  if (value.error !== undefined && typeof value.error !== "string")
    out.push(`returned error ${shown(value.error)}, not a string`);
  return out;
}

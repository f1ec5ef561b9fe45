// One run's items as the report page loads them from file:// (where a browser blocks fetch): script files
// that each hand one object to the page's global callback. index.js holds what the list filters and
// searches on, one column per fact; p<N>.js holds PAGE_SIZE items whole. A 100,000-item run opens on its
// index and one page, never on every item.
import { join } from "node:path";
import { writeFileSync, mkdirSync } from "../util/builtins.js";
import type { RunRecords } from "./item-records.js";
import type { ItemRecord, StoredRequest } from "../contract/records.js";
import type { Json } from "../util/json.js";

export const PAGE_SIZE = 200;
/** The callback every items file calls (src/report/items.client.js defines it). */
export const CALLBACK = "medbenchItems";
/** A meta field with more values than this is searched, not offered as a filter. */
const FACET_MAX = 64;
/** How much of an item's parsed answer the search covers. */
const SEARCH_PARSED = 200;

/** Flags of an item, as index.js `flags` holds them. */
export const FLAG = { parseFailure: 1, refusal: 2, apiError: 4 } as const;

/** A column of values by code: `values[codes[i]]` is item i's (JSON text, so that any value fits). */
interface Coded {
  values: string[];
  codes: number[];
}

function coder(): Coded & { add(value: unknown): void } {
  const seen = new Map<string, number>();
  const column: Coded = { values: [], codes: [] };
  return {
    ...column,
    add(value: unknown) {
      const json = value === undefined ? "null" : JSON.stringify(value);
      let code = seen.get(json);
      if (code === undefined) seen.set(json, (code = column.values.push(json) - 1));
      column.codes.push(code);
    },
  };
}

function flagsOf(records: RunRecords, id: string): number {
  const reply = records.replies?.get(id);
  const parsed = records.parsed?.get(id);
  let flags = 0;
  if (parsed && parsed.api_error === null && parsed.parsed && !parsed.parsed.ok) flags |= FLAG.parseFailure;
  if (reply && (reply.refusal !== undefined || reply.request_refused !== undefined)) flags |= FLAG.refusal;
  if (reply?.error || parsed?.api_error) flags |= FLAG.apiError;
  return flags;
}

/** What search covers beyond the id and the filter columns: other meta values and the parsed answer. */
const searchText = (item: ItemRecord, facets: ReadonlySet<string>) =>
  Object.entries(item.meta)
    .filter(([name]) => !facets.has(name))
    .map(([, x]) => (typeof x === "string" ? x : JSON.stringify(x)))
    .concat(JSON.stringify(item.parsed ?? null).slice(0, SEARCH_PARSED))
    .join(" ")
    .toLowerCase();

/** The list's columns: ids, units (as codes), flags, every verdict and every scalar meta field. */
export function indexOf(records: RunRecords) {
  const verdicts = new Map<string, ReturnType<typeof coder>>();
  const meta = new Map<string, ReturnType<typeof coder>>();
  const units = coder();
  records.items.forEach((item) => {
    for (const name of Object.keys(item.verdicts)) if (!verdicts.has(name)) verdicts.set(name, coder());
    for (const [name, value] of Object.entries(item.meta))
      if (value === null || typeof value !== "object") if (!meta.has(name)) meta.set(name, coder());
  });
  for (const item of records.items) {
    for (const [name, column] of verdicts) column.add(item.verdicts[name]);
    for (const [name, column] of meta) column.add(item.meta[name]);
    units.add(item.unit ?? item.id);
  }
  const plain = (column: Coded) => ({ values: column.values, codes: column.codes });
  const facets = [...meta].filter(([, column]) => column.values.length <= FACET_MAX);
  const facetNames = new Set(facets.map(([name]) => name));
  return {
    count: records.items.length,
    pageSize: PAGE_SIZE,
    ids: records.items.map((item) => item.id),
    units: units.codes,
    flags: records.items.map((item) => flagsOf(records, item.id)),
    text: records.items.map((item) => searchText(item, facetNames)),
    verdicts: Object.fromEntries([...verdicts].map(([name, column]) => [name, plain(column)])),
    meta: Object.fromEntries(facets.map(([name, column]) => [name, plain(column)])),
  };
}

/** One item whole; its request and reply text only where the task publishes them. */
function pageItem(records: RunRecords, item: ItemRecord, withhold: ReadonlySet<string>, refs: Set<string>) {
  const request = withhold.has("requests") ? undefined : records.requests?.get(item.id);
  const reply = records.replies?.get(item.id);
  const parsed = records.parsed?.get(item.id);
  if (request) for (const ref of sharedRefs(request)) refs.add(ref);
  return {
    ...item,
    request: request
      ? { messages: request.messages, schema: request.schema, generation: request.generation }
      : null,
    reply:
      reply && !withhold.has("replies")
        ? {
            text: reply.text,
            error: reply.error,
            finish_reason: reply.finish_reason,
            refusal: reply.refusal ?? null,
            reasoning_content: reply.reasoning_content ?? null,
            served_model: reply.served_model ?? null,
          }
        : null,
    parse: parsed && !withhold.has("parsed") ? parsed.parsed : null,
    flags: flagsOf(records, item.id),
  };
}

function sharedRefs(request: StoredRequest): string[] {
  const parts: unknown[] = [...request.messages.map((message) => message.content), request.schema];
  return parts
    .filter(
      (part): part is { $shared: string } => typeof (part as { $shared?: unknown })?.$shared === "string",
    )
    .map((part) => part.$shared);
}

const scriptOf = (run: string, page: string | number, value: unknown) =>
  `${CALLBACK}(${JSON.stringify(run)},${JSON.stringify(page)},${JSON.stringify(value)});\n`;

/** Writes the run's index.js and pages into `folder` (a fresh temp folder, renamed into place whole). */
export function writeRunPages(
  folder: string,
  run: string,
  records: RunRecords,
  withhold: ReadonlySet<string>,
): { count: number; pages: number } {
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, "index.js"), scriptOf(run, "index", indexOf(records)));
  const pages = Math.ceil(records.items.length / PAGE_SIZE);
  for (let page = 0; page < pages; page++) {
    const refs = new Set<string>();
    const items = records.items
      .slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE)
      .map((item) => pageItem(records, item, withhold, refs));
    const shared: Record<string, Json> = {};
    for (const ref of refs) shared[ref] = records.shared.get(ref) ?? null;
    writeFileSync(join(folder, `p${page}.js`), scriptOf(run, page, { shared, items }));
  }
  return { count: records.items.length, pages };
}

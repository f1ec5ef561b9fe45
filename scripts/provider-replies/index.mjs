// The provider reply corpus (README.md beside this file): loaded, checked, and filled in for one request.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const EXPECTS = ["answer", "retry", "refused-format", "refused-item", "refused-filtered", "refused-route"];

/** Every entry of the corpus by name, each checked for the fields README.md lists. */
export function loadProviderReplies() {
  return loadReplies(HERE);
}

/** The entries of one folder of the corpus (a protocol's own folder, e.g. gemini/), checked the same way. */
export function loadReplies(dir) {
  const out = {};
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    const entry = JSON.parse(readFileSync(join(dir, file), "utf8"));
    const problem = entryProblem(entry);
    if (problem) throw new Error(`scripts/provider-replies/${relative(HERE, join(dir, file))}: ${problem}`);
    out[file.slice(0, -".json".length)] = entry;
  }
  return out;
}

function entryProblem(entry) {
  const source = entry?.source;
  if (!source || typeof source.provider !== "string" || typeof source.document !== "string")
    return "source needs provider and document";
  if (!Number.isInteger(entry.status) || entry.status < 100 || entry.status > 599) return "status";
  if (entry.headers !== undefined && (typeof entry.headers !== "object" || entry.headers === null))
    return "headers must be an object";
  if (entry.body === undefined) return "no body";
  if (!EXPECTS.includes(entry.expect)) return `expect must be one of ${EXPECTS.join(", ")}`;
  if (typeof entry.note !== "string") return "no note";
  return null;
}

/** The entry's status, headers and body bytes for one request (placeholders filled in). */
export function replayed(entry, request, content) {
  const fill = (value) => {
    if (value === "{{model}}") return request.model;
    if (value === "{{content}}") return content;
    if (value === "{{reset_ms}}") return String(Date.now() + 1000); // a reset 1 s ahead, in epoch ms
    if (typeof value === "string") return value.split("{{model}}").join(String(request.model));
    if (Array.isArray(value)) return value.map(fill);
    if (value && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v)]));
    return value;
  };
  const body = typeof entry.body === "string" ? fill(entry.body) : JSON.stringify(fill(entry.body));
  const headers = { "content-type": "application/json", ...(entry.headers ?? {}) };
  return { status: entry.status, headers, body };
}

// A key in a base_url's query string (http://host/v1?key=…, a common gateway form) is a secret like a header
// value: a route shows its URL with each query value replaced, and only the HTTP client sees the URL as
// written (docs/model-requests.md, "Secrets in a route").
import { REDACTED } from "./redact.js";
import type { Route } from "./registry.js";

// A query parameter: its name and `=` kept, its value up to the next & or # replaced. Read from the text,
// not a parsed URL, so that a URL too broken to parse is hidden the same way.
const PARAM_VALUE = /([?&][^=&#]*=)[^&#]*/g;

/** The URL with every query value replaced by [redacted]; a URL without a query, unchanged. */
export function publicUrl(url: string): string {
  return url.includes("?") ? url.replace(PARAM_VALUE, `$1${REDACTED}`) : url;
}

/** The values of the URL's query, as written and decoded (a server may echo either). */
export function queryValues(url: string): string[] {
  const out = new Set<string>();
  for (const match of url.matchAll(/[?&][^=&#]*=([^&#]*)/g)) {
    const raw = match[1]!;
    if (!raw) continue;
    out.add(raw);
    try {
      out.add(decodeURIComponent(raw.replace(/\+/g, " ")));
    } catch {
      // not valid percent-encoding: the raw value alone is the secret
    }
  }
  return [...out];
}

/** The query values of every URL of every route as written (base_url and each replica): secrets to redact
 *  like the routes' header values, since any of these servers may echo its own URL back. */
export function routeQueryValues(routes: Iterable<Route>): string[] {
  return [...routes].flatMap((route) =>
    [route.base_url_with_secrets ?? "", ...(route.replicas_with_secrets ?? [])].flatMap(queryValues),
  );
}

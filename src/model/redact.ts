// Secrets out of everything a server sends back: a 401 that echoes the Authorization header, a proxy's error
// page quoting a key. Every configured key value and anything shaped like a bearer token is replaced before
// the text is stored, written or printed.
import type { Route } from "./registry.js";

export const REDACTED = "[redacted]";

/** Values that must never be written: each route's key (from its variable in env) and its header values. */
export function secretValues(
  routes: Iterable<Route>,
  env: Record<string, string | undefined>,
  extra: (string | undefined)[] = [],
): string[] {
  const out = new Set<string>();
  // Every key and every header value is a secret, whatever its length (docs/model-requests.md, "Secrets"):
  // a short one is matched as a whole word only (redact), so that it does not garble the text around it.
  const add = (value: string | undefined) => {
    if (value) out.add(value);
  };
  for (const route of routes) {
    if (route.api_key_env) add(env[route.api_key_env]);
    for (const value of Object.values(route.headers ?? {})) {
      add(String(value));
      add(/^bearer\s+(.+)$/i.exec(String(value))?.[1]);
    }
  }
  for (const value of extra) add(value);
  // Longest first, so that a key containing another is removed whole.
  return [...out].sort((left, right) => right.length - left.length);
}

// `Bearer <token>` (any token), and the long prefixed tokens providers issue
// (sk-…, sk_live_…, gsk_…, hf_…).
const BEARER = /\b(bearer|basic|token)(\s+|%20)[A-Za-z0-9._~+/=:-]{8,}/gi;
const KEY_SHAPED = /\b(?:sk|rk|pk|ak|gsk|hf|xai|ghp|glpat|key)[-_][A-Za-z0-9_-]{16,}/gi;

/** Values shorter than this are matched as whole words only (a "1" inside "10" stays). */
const SHORT = 8;
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `text` with every occurrence of `secret` (a short one: as a whole word) replaced by [redacted]. */
function removeValue(text: string, secret: string): string {
  if (secret.length >= SHORT) return text.split(secret).join(REDACTED);
  return text.replace(new RegExp(`(?<![A-Za-z0-9])${escapeRegExp(secret)}(?![A-Za-z0-9])`, "g"), REDACTED);
}

/** The text with each secret and each token-shaped string replaced by [redacted]. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    out = removeValue(out, secret);
    // The same value as a JSON string would carry it, in case the server escaped it.
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (escaped !== secret) out = removeValue(out, escaped);
  }
  return out
    .replace(BEARER, (_m, word: string, gap: string) => `${word}${gap}${REDACTED}`)
    .replace(KEY_SHAPED, REDACTED);
}

/**
 * Only the exact configured values (for a reply's own text, which may legitimately hold token-like words).
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = removeValue(out, secret);
  return out;
}

/** A parsed reply with every string in it (keys too) redacted of the exact configured values: applied after
 *  parsing, so that a short value never breaks the JSON it would otherwise be cut out of. */
export function redactJson<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return redactSecrets(value, secrets);
    if (Array.isArray(value)) return value.map(walk);
    if (value !== null && typeof value === "object")
      return Object.fromEntries(
        Object.entries(value).map(([key, x]) => [redactSecrets(key, secrets), walk(x)]),
      );
    return value;
  };
  return walk(value) as T;
}

/** The URL's user name and password, when it carries any (http://user:pass@host/), else null. */
export function urlUserinfo(url: string): string | null {
  const match = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)@/.exec(url);
  return match ? match[1]! : null;
}

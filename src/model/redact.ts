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
  const add = (v: string | undefined) => {
    // Short values ("1", "json") are not secrets, and redacting them would garble ordinary text.
    if (v && v.length >= 8) out.add(v);
  };
  for (const r of routes) {
    if (r.api_key_env) add(env[r.api_key_env]);
    for (const v of Object.values(r.headers ?? {})) {
      add(String(v));
      add(/^bearer\s+(.+)$/i.exec(String(v))?.[1]);
    }
  }
  for (const v of extra) add(v);
  // Longest first, so that a key containing another is removed whole.
  return [...out].sort((a, b) => b.length - a.length);
}

// `Bearer <token>` (any token), and the long prefixed tokens providers issue
// (sk-…, sk_live_…, gsk_…, hf_…).
const BEARER = /\b(bearer|basic|token)(\s+|%20)[A-Za-z0-9._~+/=:-]{8,}/gi;
const KEY_SHAPED = /\b(?:sk|rk|pk|ak|gsk|hf|xai|ghp|glpat|key)[-_][A-Za-z0-9_-]{16,}/gi;

/** The text with each secret and each token-shaped string replaced by [redacted]. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) {
    out = out.split(s).join(REDACTED);
    // The same value as a JSON string would carry it, in case the server escaped it.
    const escaped = JSON.stringify(s).slice(1, -1);
    if (escaped !== s) out = out.split(escaped).join(REDACTED);
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
  for (const s of secrets) out = out.split(s).join(REDACTED);
  return out;
}

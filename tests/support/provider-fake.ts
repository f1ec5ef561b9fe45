// What the fakes of the providers' own APIs (Anthropic's, Gemini's) share as the tests use them: the
// handle's shape and a routes-file entry pointing a project at one. Each protocol's file adds its own.

/** One request a provider fake received: the fields both record. */
export interface ProviderRequest {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a request body, read field by field
  body: any;
  /** The request's path, as sent. */
  url: string;
  apiKey: string | null;
  fault: string | null;
}

export interface ProviderFake<Received extends ProviderRequest> {
  /** The base URL, without the API version (as the provider's SDK takes it). */
  url: string;
  port: number;
  stats: { requests: number; replies: number; faults: Record<string, number>; received: Received[] };
  set(options: Record<string, unknown>): void;
  close(): Promise<void>;
}

/** A routes-file entry `name` for a provider fake: quick retries, no early stop, and `extra` (lines of
 *  the route, indented four spaces) after them. */
export const providerRoute = (
  name: string,
  protocol: string,
  url: string,
  keyEnv: string,
  extra = "",
): string =>
  `  ${name}:
    protocol: ${protocol}
    base_url: ${url}
    api_key_env: ${keyEnv}
    concurrency: 8
    retry: { max_attempts: 3, base_ms: 1, max_ms: 5, max_total_s: 300 }
    max_failures_in_a_row: 1000
${extra}`;

// The fake Anthropic Messages API server (scripts/fake-anthropic.mjs) as the tests use it: its handle typed
// once, and a routes-file entry pointing a project at it.
// @ts-expect-error: a plain ESM script, also run by hand
import { startFakeAnthropic } from "../../scripts/fake-anthropic.mjs";

/** One request the fake received. */
export interface AnthropicRequest {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a request body, read field by field
  body: any;
  /** The request's path, as sent. */
  url: string;
  apiKey: string | null;
  headers: Record<string, string | string[] | undefined>;
  fault: string | null;
}

export interface AnthropicFake {
  /** The base URL, without the API version (as ANTHROPIC_BASE_URL takes it). */
  url: string;
  port: number;
  stats: { requests: number; replies: number; faults: Record<string, number>; received: AnthropicRequest[] };
  set(options: Record<string, unknown>): void;
  close(): Promise<void>;
}

/** The fake on 127.0.0.1, a free port (options as scripts/fake-anthropic.mjs documents them). */
export const startAnthropicFake = (options: Record<string, unknown> = {}): Promise<AnthropicFake> =>
  startFakeAnthropic(options);

/** A routes-file entry `name` for the fake: the shipped route's fields, quick retries, no early stop. */
export const anthropicRoute = (name: string, url: string): string => `  ${name}:
    protocol: anthropic
    base_url: ${url}
    api_key_env: ANTHROPIC_API_KEY
    concurrency: 8
    retry: { max_attempts: 3, base_ms: 1, max_ms: 5, max_total_s: 300 }
    max_failures_in_a_row: 1000
`;

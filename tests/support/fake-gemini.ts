// The fake Gemini API server (scripts/fake-gemini.mjs) as the tests use it: its handle typed once, and a
// routes-file entry pointing a project at it.
// @ts-expect-error: a plain ESM script, also run by hand
import { startFakeGemini } from "../../scripts/fake-gemini.mjs";

/** One request the fake received. */
export interface GeminiRequest {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a request body, read field by field
  body: any;
  model: string;
  /** The request's path, as sent. */
  url: string;
  apiKey: string | null;
  fault: string | null;
}

export interface GeminiFake {
  /** The base URL, without the API version (as GOOGLE_GEMINI_BASE_URL takes it). */
  url: string;
  port: number;
  stats: { requests: number; replies: number; faults: Record<string, number>; received: GeminiRequest[] };
  set(options: Record<string, unknown>): void;
  close(): Promise<void>;
}

/** The fake on 127.0.0.1, a free port (options as scripts/fake-gemini.mjs documents them). */
export const startGeminiFake = (options: Record<string, unknown> = {}): Promise<GeminiFake> =>
  startFakeGemini(options);

/** A routes-file entry `name` for the fake: the shipped route's rules, quick retries, no early stop. */
export const geminiRoute = (name: string, url: string): string => `  ${name}:
    protocol: gemini
    base_url: ${url}
    api_key_env: GEMINI_API_KEY
    concurrency: 8
    retry: { max_attempts: 3, base_ms: 1, max_ms: 5, max_total_s: 300 }
    max_failures_in_a_row: 1000
    request:
      models:
        "gemini-2.5-pro*":
          reasoning_low:
            generationConfig: { thinkingConfig: { thinkingBudget: 128, includeThoughts: true } }
        "gemini-2.5-flash*":
          thinking_off:
            generationConfig: { thinkingConfig: { thinkingBudget: 0 } }
`;

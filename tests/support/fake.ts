// The fake OpenAI-compatible server (scripts/fake-openai.mjs) as the tests use it: its handle typed once,
// and a routes-file entry pointing a project at it.
// @ts-expect-error: a plain ESM script, also run by hand
import { startFakeOpenAI } from "../../scripts/fake-openai.mjs";

/** One request the fake received. */
export interface FakeRequest {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a request body, read field by field
  body: any;
  /** The request's path and query, as sent. */
  url: string;
  authorization: string | null;
  at: number;
  fault: string | null;
}

export interface Fake {
  url: string;
  port: number;
  stats: {
    requests: number;
    /** 200s with a completion. */
    replies: number;
    bodies: Map<string, number>;
    answered: Set<string>;
    faults: Record<string, number>;
    received: FakeRequest[];
    connections: number;
    maxOpen: number;
    /** When the first request came and the last reply went (ms since the epoch). */
    firstAt: number | null;
    lastAnsweredAt: number | null;
  };
  set(options: Record<string, unknown>): void;
  close(): Promise<void>;
}

/** The fake on 127.0.0.1, a free port (options as scripts/fake-openai.mjs documents them). */
export const startFake = (options: Record<string, unknown> = {}): Promise<Fake> => startFakeOpenAI(options);

/** A routes-file entry `name` for the fake: quick retries, no stop on failures, thinking off by a flag. */
export const fakeRoute = (name: string, url: string): string => `  ${name}:
    base_url: ${url}
    concurrency: 8
    timeout_s: 120
    retry: { max_attempts: 2, base_ms: 1, max_ms: 5, max_total_s: 300 }
    max_failures_in_a_row: 1000
    request:
      thinking_off: { chat_template_kwargs: { enable_thinking: false } }
`;

// `build --max-cost USD`: one budget for every model and judge stage of a build. A stage refuses to start
// when what it would send is estimated to cost more than is left, and stops when what its replies cost
// (their usage at the route's price) reaches the limit (docs/model-requests.md, "Cost").
import type { Json } from "../util/json.js";
import { costOf, dollars, type Price } from "./price.js";

export class Budget {
  private spentUsd = 0;

  constructor(readonly maxUsd: number) {}

  get spent(): number {
    return this.spentUsd;
  }

  get left(): number {
    return Math.max(0, this.maxUsd - this.spentUsd);
  }

  get reached(): boolean {
    return this.spentUsd >= this.maxUsd;
  }

  /** Adds what one reply cost; whether the limit is now reached. */
  charge(usd: number): boolean {
    this.spentUsd += usd;
    return this.reached;
  }

  describe(): string {
    return `--max-cost ${dollars(this.maxUsd)} (spent so far ${dollars(this.spentUsd)})`;
  }
}

/** What sending some bodies would take: an estimate, since input tokens are counted as bytes / 4. */
export interface SendEstimate {
  requests: number;
  /** Estimated as the body's bytes / 4 (a tokenizer's count differs by model and language). */
  input_tokens: number;
  /** The bodies' max tokens fields summed (the most the replies may take); null when a body has none. */
  output_tokens: number | null;
  /** At the route's price for the model (its batch discount when sent as a batch); null: no price, or no
   *  bound on the output. */
  cost_usd: number | null;
}

/** The estimate of sending these bodies (their bytes as sent) at a price; `outputBound` is the protocol's
 *  reading of a body's max tokens field, under whatever name that protocol sends it. */
export function estimateOf(
  bodies: readonly { payload: Buffer; body: Json }[],
  outputBound: (body: Json) => number | null,
  price: Price | null,
  batch: boolean,
): SendEstimate {
  let input = 0;
  let output: number | null = 0;
  for (const { payload, body } of bodies) {
    input += Math.ceil(payload.length / 4);
    const bound = outputBound(body);
    output = bound === null || output === null ? null : output + bound;
  }
  const tokens = { prompt: input, completion: output ?? 0, reasoning: 0, cached: 0 };
  const cost = price && output !== null ? costOf(tokens, price, batch) : null;
  return { requests: bodies.length, input_tokens: input, output_tokens: output, cost_usd: cost };
}

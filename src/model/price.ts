// Tokens and what they cost. A run's token totals come from its replies' usage, read by each route's
// protocol (src/model/protocol.ts `tokens`); a price is a route's `price:` for a model, in US dollars per
// million tokens (docs/records.md, "Tokens and cost"). Cost is worked out from tokens and price when it is
// shown, so a result's files hold no price and a batch build's results equal an online build's.
import type { Json } from "../util/json.js";
import type { Route } from "./registry.js";
import { globMatches } from "./model-rules.js";

/** Token totals in one shape for every provider: prompt counts every input token, cached ones included;
 *  completion every output token, reasoning ones included. */
export interface Tokens {
  prompt: number;
  completion: number;
  reasoning: number;
  cached: number;
}

export const NO_TOKENS: Tokens = { prompt: 0, completion: 0, reasoning: 0, cached: 0 };

/** A model's price on a route, US dollars per million tokens. */
export interface Price {
  input: number;
  output: number;
  /** Input tokens read from the provider's prompt cache (default: the input price). */
  cached_input?: number;
  /** The share taken off by the provider's batch API (0.5: half price; default none). */
  batch_discount?: number;
}

export function addTokens(left: Tokens, right: Tokens): Tokens {
  return {
    prompt: left.prompt + right.prompt,
    completion: left.completion + right.completion,
    reasoning: left.reasoning + right.reasoning,
    cached: left.cached + right.cached,
  };
}

/** The price of a model on a route: the first pattern of `price:`, in the order written, that matches. */
export function priceOf(route: Route | undefined, model: string): Price | null {
  for (const [pattern, price] of Object.entries(route?.price ?? {}))
    if (globMatches(pattern, model)) return price;
  return null;
}

/** What tokens cost at a price, in US dollars; `batch`: sent through the provider's batch API. */
export function costOf(tokens: Tokens, price: Price, batch = false): number {
  const cached = Math.min(tokens.cached, tokens.prompt);
  const input = (tokens.prompt - cached) * price.input + cached * (price.cached_input ?? price.input);
  const full = (input + tokens.completion * price.output) / 1e6;
  return batch ? full * (1 - (price.batch_discount ?? 0)) : full;
}

/** Dollars as a terminal or a page shows them: cents, or four places below a cent. */
export function dollars(usd: number): string {
  if (usd >= 0.01 || usd === 0) return `$${usd.toFixed(2)}`;
  return `$${usd.toFixed(usd >= 0.0001 ? 4 : 6)}`;
}

/** A metrics.json `tokens` object read back, or null when it is not one. */
export function tokensOf(value: Json | undefined): Tokens | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const read = (name: string) => (typeof value[name] === "number" ? (value[name] as number) : null);
  const [prompt, completion, reasoning, cached] = ["prompt", "completion", "reasoning", "cached"].map(read);
  if (prompt == null || completion == null || reasoning == null || cached == null) return null;
  return { prompt, completion, reasoning, cached };
}

/** A run's cost at today's prices of the registry: its model's tokens (metrics.json `metrics.tokens`) and
 *  each judge's (`metrics.judges.<model>.tokens`), each at its route's price. `usd` is null when the run
 *  has no token totals (a built-in model, or a result from before them); `unpriced` names the models the
 *  registry has no price for (left out of `usd`). Online prices: results do not say which replies came
 *  from a batch. */
export interface RunCost {
  usd: number | null;
  tokens: Tokens | null;
  unpriced: string[];
}

export function runCost(
  metrics: { [field: string]: Json | undefined },
  route: (name: string) => Route | undefined,
): RunCost {
  const fields = (metrics.metrics ?? {}) as { [field: string]: Json | undefined };
  const parts: [string, Tokens][] = [];
  const own = tokensOf(fields.tokens);
  if (own && typeof metrics.model === "string") parts.push([metrics.model, own]);
  const judges = fields.judges;
  if (judges && typeof judges === "object" && !Array.isArray(judges))
    for (const [model, audit] of Object.entries(judges)) {
      const tokens = tokensOf((audit as { tokens?: Json } | null)?.tokens);
      if (tokens) parts.push([model, tokens]);
    }
  if (parts.length === 0) return { usd: null, tokens: null, unpriced: [] };
  let usd = 0;
  const unpriced: string[] = [];
  for (const [name, tokens] of parts) {
    const slash = name.indexOf("/");
    const price = priceOf(route(name.slice(0, slash)), name.slice(slash + 1));
    if (price) usd += costOf(tokens, price);
    else unpriced.push(name);
  }
  return { usd: unpriced.length === parts.length ? null : usd, tokens: own, unpriced };
}

/** A run's cost in a few words: dollars, or why there are none. */
export function costWords(cost: RunCost): string {
  if (cost.tokens === null && cost.usd === null) return "no token counts";
  if (cost.usd === null) return `no price for ${cost.unpriced.join(", ")}`;
  const left = cost.unpriced.length ? ` (${cost.unpriced.join(", ")} unpriced)` : "";
  return `${dollars(cost.usd)}${left}`;
}

/** A build's line on its run's tokens and their cost at the registry's prices, with what this build spent
 *  when it had a --max-cost budget; null for a run with neither tokens nor cost. */
export function costLine(cost: RunCost, spentUsd: number | null): string | null {
  if (cost.tokens === null && cost.usd === null) return null;
  const tokens = cost.tokens;
  const counted = tokens
    ? `tokens: prompt ${tokens.prompt} (cached ${tokens.cached}), completion ${tokens.completion} ` +
      `(reasoning ${tokens.reasoning}); `
    : "";
  const spent = spentUsd === null ? "" : `; spent by this build ${dollars(spentUsd)}`;
  return `${counted}cost ${costWords(cost)} at the registry's prices${spent}`;
}

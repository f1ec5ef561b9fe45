// The options only `build` takes, beyond the shared ones of options.ts: --shard, --batch and --wait,
// --max-cost. Each module they need loads only when its option is given (a no-op build loads none).
import { UsageError } from "../errors.js";
import type { BuildOptions } from "../runner/execution/executor.js";

/** Adds `build`'s own options of the parsed flags to the shared build options. */
export async function addBuildOnlyOptions(
  opts: BuildOptions,
  values: Record<string, unknown>,
): Promise<void> {
  if (values.shard !== undefined) opts.shard = await shardOption(values.shard as string);
  if (values.wait && !values.batch) await waitNeedsBatches(opts);
  if (values.batch || values.wait) opts.batch = { on: Boolean(values.batch), wait: Boolean(values.wait) };
  if (values["max-cost"] !== undefined) opts.budget = await budgetOption(values["max-cost"] as string);
}

async function budgetOption(text: string): Promise<BuildOptions["budget"]> {
  const usd = Number(text);
  if (text.trim() === "" || !Number.isFinite(usd) || usd < 0)
    throw new UsageError(`--max-cost takes US dollars (a number, 0 or more), not ${JSON.stringify(text)}`);
  const { Budget } = await import("../model/budget.js");
  return new Budget(usd);
}

/** --wait polls provider batches: without --batch only a route that sends batches by default makes any. */
async function waitNeedsBatches(opts: BuildOptions): Promise<void> {
  const { commandRoutes } = await import("../model/routes.js");
  if (
    commandRoutes(opts.registryFiles)
      .list()
      .some((route) => route.batch)
  )
    return;
  throw new UsageError(
    "--wait polls the provider batches of a --batch build, and this build sends none",
    "add --batch (or set batch: true on the route in its registry file), or leave --wait out",
  );
}

async function shardOption(text: string): Promise<BuildOptions["shard"]> {
  const { parseShard } = await import("../remote/shard.js");
  const shard = parseShard(text);
  if (typeof shard === "string") throw new UsageError(shard);
  return shard;
}

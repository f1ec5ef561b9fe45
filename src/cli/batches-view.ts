// medbench cache batches [cancel ID]: the provider batches this cache's builds made (the reply memo's
// `batches` namespace, stages/model-batch.ts), each with its state as the provider says it now; and the
// cancelling of one. The route of a batch is the registry's route of the name its build recorded.
import { Cache } from "../runner/store/cache.js";
import type { Project } from "../runner/project/project.js";
import { replyLog } from "../runner/replies/memo.js";
import { CommandFailure, UsageError } from "../errors.js";
import { commandRoutes } from "../model/routes.js";
import { batchApiOf, type BatchApi, type BatchState } from "../model/batch-api.js";
import { protocolOf } from "../model/protocols.js";
import { secretValues } from "../model/redact.js";
import { routeQueryValues } from "../model/url-secrets.js";
import type { Route } from "../model/registry.js";

interface Recorded {
  route: string;
  base_url: string;
  model: string;
  batches: { id: string; keys: string[] }[];
}

interface Listed {
  id: string;
  route: string;
  model: string;
  requests: number;
  status: string;
  open: boolean;
}

/** Every batch the cache records, once (a set's record grows as its batches are made). */
function recordedBatches(project: Project): { record: Recorded; batch: Recorded["batches"][number] }[] {
  const log = replyLog(new Cache(project.cacheDir), "batches", false);
  const seen = new Map<string, { record: Recorded; batch: Recorded["batches"][number] }>();
  for (const key of log.sizes().keys()) {
    const record = readRecord(log.get(key));
    for (const batch of record?.batches ?? []) seen.set(batch.id, { record: record!, batch });
  }
  return [...seen.values()];
}

/** A batch set's record, or null when the entry is damaged (it is listed as nothing, never a crash). */
function readRecord(entry: Buffer | undefined | null): Recorded | null {
  if (!entry) return null;
  try {
    const record = JSON.parse(entry.toString("utf8")) as Recorded;
    return Array.isArray(record?.batches) ? record : null;
  } catch {
    return null;
  }
}

/** A client for the route a batch's build used, with its key from the environment. */
async function clientOf(record: Recorded, registry: string[]): Promise<BatchApi> {
  const routes = commandRoutes(registry);
  const route: Route | undefined = routes.get(record.route);
  if (!route || route.base_url !== record.base_url)
    throw new UsageError(
      `the batch's route ${record.route} (${record.base_url}) is not in the registry as it was: ` +
        "name the registry file its build used with --registry FILE",
    );
  const apiKey = route.api_key_env ? process.env[route.api_key_env] : undefined;
  const list = routes.list();
  const secrets = secretValues(list, process.env, routeQueryValues(list));
  const api = await batchApiOf(await protocolOf(route), { route, model: record.model }, apiKey, secrets);
  if (!api) throw new UsageError(`route ${record.route}: medbench has no batch API for its protocol`);
  return api;
}

export async function listBatches(project: Project, registry: string[], json: boolean): Promise<number> {
  const listed: Listed[] = [];
  for (const { record, batch } of recordedBatches(project)) {
    // A batch whose route is gone from the registry is listed as such; the others are still asked.
    const client = await clientOf(record, registry).catch((e: Error) => e);
    const state: BatchState | null =
      client instanceof Error ? null : await client.state(batch.id).catch(() => null);
    const status =
      client instanceof Error
        ? `unknown: ${client.message}`
        : (state?.status ?? "unknown (the provider did not answer)");
    const item = { id: batch.id, route: record.route, model: record.model, requests: batch.keys.length };
    listed.push({ ...item, status, open: state ? !state.done : true });
  }
  const open = listed.filter((x) => x.open);
  if (json) process.stdout.write(JSON.stringify({ batches: listed }) + "\n");
  else {
    process.stdout.write(`${open.length} open of ${listed.length} batches this cache records\n`);
    for (const x of listed)
      process.stdout.write(`  ${x.id}  ${x.route}/${x.model}  ${x.requests} requests  ${x.status}\n`);
  }
  return 0;
}

export async function cancelBatch(project: Project, id: string, registry: string[], json: boolean) {
  const found = recordedBatches(project).find((x) => x.batch.id === id);
  if (!found)
    throw new UsageError(
      `no batch ${id} in this cache: \`medbench cache batches\` lists the batches it records`,
    );
  try {
    await (await clientOf(found.record, registry)).cancel(id);
  } catch (e) {
    throw new CommandFailure(
      `could not cancel batch ${id}: ${(e as Error).message}`,
      "check the route's key and that the batch is still open (medbench cache batches)",
    );
  }
  // Its answered requests are collected by the next build; the others are sent again.
  if (json) process.stdout.write(JSON.stringify({ cancelled: id }) + "\n");
  else process.stdout.write(`batch ${id}: cancel asked; the next build collects what it answered\n`);
  return 0;
}

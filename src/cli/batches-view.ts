// medbench cache batches [cancel ID]: the provider batches this cache's builds made (the reply memo's
// `batches` namespace, stages/model-batch.ts) and, with a shared remote configured, those any machine's
// builds recorded there, each with its state as the provider says it now; and the cancelling of one. The
// route of a batch is the registry's route of the name its build recorded.
import { Cache } from "../runner/store/cache.js";
import type { Project } from "../runner/project/project.js";
import { replyFolder, replyLog } from "../runner/replies/memo.js";
import { openRemote } from "../remote/store.js";
import { replyName } from "../remote/opened.js";
import { CommandFailure, UsageError } from "../errors.js";
import { commandRoutes } from "../model/routes.js";
import { batchApiOf, type BatchApi, type BatchState, type PendingBatch } from "../model/batch-api.js";
import { protocolOf } from "../model/protocols.js";
import { secretValues } from "../model/redact.js";
import { routeQueryValues } from "../model/url-secrets.js";
import type { Route } from "../model/registry.js";

interface Recorded {
  route: string;
  base_url: string;
  model: string;
  batches: { id: string; keys: string[] }[];
  /** A batch a build was making when it stopped (stages/model-batch.ts), its id not recorded. */
  pending?: PendingBatch | null;
}

const NAMESPACE = "batches";
const warnToStderr = (message: string) => process.stderr.write(`warning: ${message}\n`);

interface Listed {
  id: string;
  /** Where it is recorded: "cache", "remote" ("…: being made": found at the provider by its label). */
  recorded: string[];
  route: string;
  model: string;
  requests: number;
  status: string;
  open: boolean;
}

type Found = { record: Recorded; batch: Recorded["batches"][number]; where: string[] };

/** Every batch the cache and the shared remote record, once (a set's record grows as its batches are made),
 *  with where it is recorded; and those builds were making when they stopped, found at the provider. */
async function recordedBatches(project: Project, registry: string[]): Promise<Found[]> {
  const log = replyLog(new Cache(project.cacheDir), NAMESPACE, false);
  const seen = new Map<string, Found>();
  const making = new Map<string, { record: Recorded; where: string }>();
  const add = (record: Recorded | null, where: string) => {
    if (record?.pending) making.set(record.pending.tag, { record, where });
    for (const batch of record?.batches ?? []) {
      const found = seen.get(batch.id);
      if (found) found.where.push(where);
      else seen.set(batch.id, { record: record!, batch, where: [where] });
    }
  };
  for (const key of log.sizes().keys()) add(readRecord(log.get(key)), "cache");
  for (const record of await remoteRecords()) add(record, "remote");
  for (const { record, where } of making.values()) {
    const id = await madeWhenStopped(record, registry);
    const batch = { id: id ?? "", keys: record.pending!.keys };
    if (id && !seen.has(id)) seen.set(id, { record, batch, where: [`${where}: being made`] });
  }
  return [...seen.values()];
}

/** The id of the batch a build was making when it stopped, as its provider lists it (null: not found). */
async function madeWhenStopped(record: Recorded, registry: string[]): Promise<string | null> {
  const client = await clientOf(record, registry).catch(() => null);
  const known = new Set(record.batches.map((batch) => batch.id));
  return client ? client.find(record.pending!, known).catch(() => null) : null;
}

/** The batch records in the shared remote (MEDBENCH_REMOTE), none without one; a remote that cannot be
 *  listed is said on stderr, and the cache's records are listed still. */
async function remoteRecords(): Promise<(Recorded | null)[]> {
  const remote = openRemote(process.env, warnToStderr);
  if (!remote) return [];
  const names = await remote.list(replyName(replyFolder(NAMESPACE), ""));
  const records: (Recorded | null)[] = [];
  for (const name of names?.keys() ?? []) records.push(readRecord(await remote.getKeyed(name)));
  return records;
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
  const found = await recordedBatches(project, registry);
  for (const { record, batch, where } of found) {
    // A batch whose route is gone from the registry is listed as such; the others are still asked.
    const client = await clientOf(record, registry).catch((e: Error) => e);
    const state: BatchState | null =
      client instanceof Error ? null : await client.state(batch.id).catch(() => null);
    const status =
      client instanceof Error
        ? `unknown: ${client.message}`
        : (state?.status ?? "unknown (the provider did not answer)");
    const item = {
      id: batch.id,
      route: record.route,
      model: record.model,
      requests: batch.keys.length,
      recorded: where,
    };
    listed.push({ ...item, status, open: state ? !state.done : true });
  }
  const open = listed.filter((x) => x.open);
  if (json) process.stdout.write(JSON.stringify({ batches: listed }) + "\n");
  else {
    process.stdout.write(
      `${open.length} open of ${listed.length} batches this cache or the remote records\n`,
    );
    for (const x of listed) {
      const line = `${x.id}  ${x.route}/${x.model}  ${x.requests} requests  ${x.status}`;
      process.stdout.write(`  ${line}  (${x.recorded.join(", ")})\n`);
    }
  }
  return 0;
}

export async function cancelBatch(project: Project, id: string, registry: string[], json: boolean) {
  const found = (await recordedBatches(project, registry)).find((x) => x.batch.id === id);
  if (!found)
    throw new UsageError(
      `no batch ${id} in this cache or the shared remote: \`medbench cache batches\` lists those recorded`,
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

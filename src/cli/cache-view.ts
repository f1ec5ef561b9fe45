// What `medbench cache` runs and prints; the work is in src/runner/upkeep/ (sync.ts, gc.ts).
import { Cache } from "../runner/store/cache.js";
import { localInventory, localStore, sum, type Inventory } from "../runner/upkeep/inventory.js";
import type { Project } from "../runner/project/project.js";
import { openRemote, type RemoteStore } from "../remote/store.js";
import { CommandFailure, UsageError } from "../errors.js";

function bytes(count: number): string {
  if (count < 1024) return `${count} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let value = count,
    unit = -1;
  while (value >= 1024 && unit < units.length - 1) ((value /= 1024), unit++);
  return `${value.toFixed(1)} ${units[unit]}`;
}

const replyCount = (inv: Inventory) =>
  [...inv.replies.values()].reduce((total, sizes) => total + sizes.size, 0);
const replyBytes = (inv: Inventory) =>
  [...inv.replies.values()].reduce((total, sizes) => total + sum(sizes), 0);

function counts(inv: Inventory) {
  return {
    objects: inv.objects.size,
    object_bytes: sum(inv.objects),
    stages: inv.stages.size,
    replies: replyCount(inv),
    reply_bytes: replyBytes(inv),
    namespaces: Object.fromEntries([...inv.replies].map(([ns, sizes]) => [ns, sizes.size])),
  };
}

const warnToStderr = (message: string) => process.stderr.write(`warning: ${message}\n`);

export async function status(project: Project, json: boolean): Promise<number> {
  const warnings: string[] = [];
  const remote = openRemote(process.env, (message) => warnings.push(message));
  const cache = new Cache(project.cacheDir);
  const local = localInventory(cache, false); // a status writes nothing
  const { remoteInventory, missing } = await import("../runner/upkeep/sync.js");
  const there = remote ? await remoteInventory(remote) : null;
  const up = there ? missing(local, there) : null;
  const down = there ? missing(there, local) : null;
  const side = (gap: NonNullable<typeof up>) => ({
    objects: gap.objects.length,
    stages: gap.stages.length,
    replies: gap.replies.length,
  });
  if (json) {
    process.stdout.write(
      JSON.stringify({
        local: { dir: project.cacheDir, ...counts(local) },
        remote: remote
          ? {
              url: remote.config.url,
              reachable: there !== null,
              ...(there ? {} : { error: remote.failure }),
              ...(there ? { ...counts(there), not_on_remote: side(up!), not_local: side(down!) } : {}),
            }
          : null,
      }) + "\n",
    );
    return 0;
  }
  const mine = counts(local);
  const lines = [
    `local cache ${project.cacheDir}`,
    `  objects   ${mine.objects} (${bytes(mine.object_bytes)})`,
    `  stages    ${mine.stages} manifests`,
    `  replies   ${mine.replies} (${bytes(mine.reply_bytes)})` +
      (local.replies.size > 1
        ? `: ${[...local.replies].map(([ns, sizes]) => `${ns} ${sizes.size}`).join(", ")}`
        : ""),
  ];
  if (!remote) lines.push("remote      not configured (set MEDBENCH_REMOTE=s3://BUCKET/PREFIX)");
  else if (!there) lines.push(`remote      ${remote.config.url}: unreachable (${remote.failure ?? "?"})`);
  else {
    const theirs = counts(there);
    const say = (gap: NonNullable<typeof up>) =>
      `${gap.objects.length} objects, ${gap.stages.length} stage manifests, ${gap.replies.length} replies`;
    const push = up!.objects.length + up!.replies.length ? " (cache push)" : "";
    const pull = down!.objects.length + down!.replies.length ? " (cache pull)" : "";
    lines.push(
      `remote      ${remote.config.url}: reachable, ` +
        `${theirs.objects} objects (${bytes(theirs.object_bytes)}), ` +
        `${theirs.stages} manifests, ${theirs.replies} replies`,
      `  not on the remote: ${say(up!)}${push}`,
      `  not here:          ${say(down!)}${pull}`,
    );
  }
  process.stdout.write(lines.join("\n") + "\n");
  return 0;
}

function needRemote(action: string): RemoteStore {
  const remote = openRemote(process.env, warnToStderr);
  if (!remote)
    throw new UsageError(
      `cache ${action} needs a shared remote: MEDBENCH_REMOTE is not set ` +
        "(set it like s3://team-bucket/medbench, and MEDBENCH_REMOTE_ENDPOINT for a non-AWS store)",
    );
  return remote;
}

export async function transfer(project: Project, action: "push" | "pull", json: boolean): Promise<number> {
  const remote = needRemote(action);
  const cache = new Cache(project.cacheDir);
  const sync = await import("../runner/upkeep/sync.js");
  const there = await sync.remoteInventory(remote);
  if (!there)
    throw new CommandFailure(
      `cannot list ${remote.config.url}; nothing was copied`,
      "check MEDBENCH_REMOTE, MEDBENCH_REMOTE_ENDPOINT and the credentials, then run it again",
    );
  const local = localInventory(cache);
  const here = localStore(cache);
  const copied =
    action === "push"
      ? await sync.copy(here, remote, local, there)
      : await sync.copy(remote, here, there, local);
  await remote.settle();
  const whole = remote.available && copied.refused === 0;
  if (json)
    process.stdout.write(
      JSON.stringify({ action, url: remote.config.url, ...copied, complete: whole, error: remote.failure }) +
        "\n",
    );
  else {
    const verb = action === "push" ? "uploaded to" : "downloaded from";
    process.stdout.write(
      `${verb} ${remote.config.url}: ${copied.objects} objects, ${copied.stages} stage manifests, ` +
        `${copied.replies} replies` +
        (copied.refused ? `; ${copied.refused} damaged, refused` : "") +
        (copied.skipped
          ? `; ${copied.skipped} manifests not copied (incomplete, or an output is missing)`
          : "") +
        "\n",
    );
  }
  if (!remote.available)
    process.stderr.write(
      `error: cache ${action} stopped: the remote failed; what was copied is whole. Run it again.\n`,
    );
  return whole ? 0 : 1;
}

export async function gc(project: Project, keepRecentMs: number, dryRun: boolean, json: boolean) {
  const { references, collect } = await import("../runner/upkeep/gc.js");
  const cache = new Cache(project.cacheDir);
  const refs = references(project, cache);
  const collected = collect(cache, refs, keepRecentMs, dryRun);
  if (json) {
    process.stdout.write(
      JSON.stringify({ dry_run: dryRun, ...collected, referenced_by: refs.sources }) + "\n",
    );
    return 0;
  }
  const verb = dryRun ? "would remove" : "removed";
  const lines: string[] = [];
  if (dryRun) {
    for (const object of collected.objects) lines.push(`  object   ${object.hash} (${bytes(object.bytes)})`);
    for (const stageKey of collected.stages) lines.push(`  manifest ${stageKey}`);
    for (const reply of collected.replies) lines.push(`  reply    ${reply.folder}/${reply.key}`);
  }
  const referrers = refs.sources.length ? refs.sources.join(", ") : "nothing";
  lines.push(
    `${verb} ${collected.objects.length} objects, ${collected.stages.length} stage manifests and ` +
      `${collected.replies.length} replies (${bytes(collected.bytes)}); ` +
      `kept ${collected.kept.objects} objects, ${collected.kept.stages} manifests and ` +
      `${collected.kept.replies} replies, referenced by ${referrers}` +
      (keepRecentMs > 0 ? ` or written in the last ${keepRecentMs / 60_000} minutes` : ""),
  );
  process.stdout.write(lines.join("\n") + "\n");
  return 0;
}

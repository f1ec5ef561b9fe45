// What `medbench cache` runs and prints; the work is in src/remote/sync.ts and src/runner/gc.ts.
import { Cache } from "../runner/cache.js";
import { cacheStore, localInventory, sum, type Inventory } from "../runner/inventory.js";
import type { Project } from "../runner/project.js";
import { openRemote, type RemoteStore } from "../remote/store.js";
import { CommandFailure, UsageError } from "../errors.js";

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let v = n,
    u = -1;
  while (v >= 1024 && u < units.length - 1) ((v /= 1024), u++);
  return `${v.toFixed(1)} ${units[u]}`;
}

const replyCount = (inv: Inventory) => [...inv.replies.values()].reduce((a, m) => a + m.size, 0);
const replyBytes = (inv: Inventory) => [...inv.replies.values()].reduce((a, m) => a + sum(m), 0);

function counts(inv: Inventory) {
  return {
    objects: inv.objects.size,
    object_bytes: sum(inv.objects),
    stages: inv.stages.size,
    replies: replyCount(inv),
    reply_bytes: replyBytes(inv),
    namespaces: Object.fromEntries([...inv.replies].map(([ns, m]) => [ns, m.size])),
  };
}

const warnToStderr = (message: string) => process.stderr.write(`warning: ${message}\n`);

export async function status(project: Project, json: boolean): Promise<number> {
  const warnings: string[] = [];
  const remote = openRemote(process.env, (m) => warnings.push(m));
  const cache = new Cache(project.cacheDir);
  const local = localInventory(cache, false); // a status writes nothing
  const { remoteInventory, missing } = await import("../remote/sync.js");
  const there = remote ? await remoteInventory(remote) : null;
  const up = there ? missing(local, there) : null;
  const down = there ? missing(there, local) : null;
  const side = (m: NonNullable<typeof up>) => ({
    objects: m.objects.length,
    stages: m.stages.length,
    replies: m.replies.length,
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
  const c = counts(local);
  const lines = [
    `local cache ${project.cacheDir}`,
    `  objects   ${c.objects} (${bytes(c.object_bytes)})`,
    `  stages    ${c.stages} manifests`,
    `  replies   ${c.replies} (${bytes(c.reply_bytes)})` +
      (local.replies.size > 1
        ? `: ${[...local.replies].map(([ns, m]) => `${ns} ${m.size}`).join(", ")}`
        : ""),
  ];
  if (!remote) lines.push("remote      not configured (set MEDBENCH_REMOTE=s3://BUCKET/PREFIX)");
  else if (!there) lines.push(`remote      ${remote.config.url}: unreachable (${remote.failure ?? "?"})`);
  else {
    const r = counts(there);
    const say = (m: NonNullable<typeof up>) =>
      `${m.objects.length} objects, ${m.stages.length} stage manifests, ${m.replies.length} replies`;
    const push = up!.objects.length + up!.replies.length ? " (cache push)" : "";
    const pull = down!.objects.length + down!.replies.length ? " (cache pull)" : "";
    lines.push(
      `remote      ${remote.config.url}: reachable, ${r.objects} objects (${bytes(r.object_bytes)}), ` +
        `${r.stages} manifests, ${r.replies} replies`,
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
  const cache = new Cache(project.cacheDir, remote);
  const sync = await import("../remote/sync.js");
  const there = await sync.remoteInventory(remote);
  if (!there)
    throw new CommandFailure(
      `cannot list ${remote.config.url}; nothing was copied`,
      "check MEDBENCH_REMOTE, MEDBENCH_REMOTE_ENDPOINT and the credentials, then run it again",
    );
  const local = localInventory(cache);
  const t = await (action === "push" ? sync.push : sync.pull)(cacheStore(cache), remote, local, there);
  const whole = remote.available && t.refused === 0;
  if (json)
    process.stdout.write(
      JSON.stringify({ action, url: remote.config.url, ...t, complete: whole, error: remote.failure }) + "\n",
    );
  else {
    const verb = action === "push" ? "uploaded to" : "downloaded from";
    process.stdout.write(
      `${verb} ${remote.config.url}: ${t.objects} objects, ${t.stages} stage manifests, ` +
        `${t.replies} replies` +
        (t.refused ? `; ${t.refused} damaged, refused` : "") +
        (t.skipped ? `; ${t.skipped} manifests not shared (incomplete, or an output is missing)` : "") +
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
  const { references, collect } = await import("../runner/gc.js");
  const cache = new Cache(project.cacheDir);
  const refs = references(project, cache);
  const c = collect(cache, refs, keepRecentMs, dryRun);
  if (json) {
    process.stdout.write(JSON.stringify({ dry_run: dryRun, ...c, referenced_by: refs.sources }) + "\n");
    return 0;
  }
  const verb = dryRun ? "would remove" : "removed";
  const lines: string[] = [];
  if (dryRun) {
    for (const o of c.objects) lines.push(`  object   ${o.hash} (${bytes(o.bytes)})`);
    for (const k of c.stages) lines.push(`  manifest ${k}`);
    for (const r of c.replies) lines.push(`  reply    ${r.folder}/${r.key}`);
  }
  const referrers = refs.sources.length ? refs.sources.join(", ") : "nothing";
  lines.push(
    `${verb} ${c.objects.length} objects, ${c.stages.length} stage manifests and ${c.replies.length} ` +
      `replies (${bytes(c.bytes)}); kept ${c.kept.objects} objects, ${c.kept.stages} manifests and ` +
      `${c.kept.replies} replies, referenced by ${referrers}` +
      (keepRecentMs > 0 ? ` or written in the last ${keepRecentMs / 60_000} minutes` : ""),
  );
  process.stdout.write(lines.join("\n") + "\n");
  return 0;
}

// medbench cache status|push|pull|gc: the local cache and the shared remote (MEDBENCH_REMOTE) side by side.
import { parse, intOption } from "../args.js";
import { UsageError } from "../../errors.js";
import { usageError, type Command } from "../command.js";
import { projectOf } from "../options.js";

export const command: Command = {
  help: `usage: medbench cache status|push|pull|gc|batches [options]
       medbench cache batches cancel ID

  status              local objects, stage manifests and replies (counts and bytes); the remote
                      (MEDBENCH_REMOTE): configured, reachable, and what each side lacks
  push                upload what the remote lacks (checked against its hash, each object whole)
  pull                download what the local cache lacks (a damaged remote object is refused)
  batches             the provider batches this cache's builds made (build --batch), and those any machine
                      recorded in the remote (MEDBENCH_REMOTE), each with its state now (--registry FILE:
                      the routes their builds used)
  batches cancel ID   cancel one; the next build collects what it answered and sends the rest
  gc                  remove local objects, manifests and replies that no build in medbench.lock and no
                      results folder's build.json refers to (the lock and results are never touched)

  --dry-run           gc: list what would go, remove nothing
  --keep-recent MIN   gc: keep anything written in the last MIN minutes (default 60: a build running now
                      may not have recorded it yet); 0 collects everything unreferenced
  --project DIR       the project root (default: the current directory)
  --cache DIR         the cache folder (default: PROJECT/cache)
  --json              one JSON object on stdout

The remote is MEDBENCH_REMOTE=s3://BUCKET/PREFIX (MEDBENCH_REMOTE_ENDPOINT for MinIO and the like), with
credentials from the standard AWS environment variables and profiles (never written anywhere).`,
  run,
};

const OPTIONS = {
  "dry-run": { type: "boolean" },
  "keep-recent": { type: "string" },
  project: { type: "string" },
  cache: { type: "string" },
  registry: { type: "string", multiple: true },
  json: { type: "boolean" },
} as const;

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS, "cache");
  const [action, ...extra] = positionals;
  if (action === "batches") return batches(extra, values);
  if (values.registry) throw new UsageError("--registry is an option of `cache batches`");
  if (!action || extra.length > 0 || !["status", "push", "pull", "gc"].includes(action))
    throw usageError(command, action ? `unknown cache action ${JSON.stringify(action)}` : "name an action");
  if (action !== "gc" && (values["dry-run"] || values["keep-recent"] !== undefined))
    throw new UsageError(
      `--dry-run and --keep-recent are options of \`cache gc\`, not of \`cache ${action}\``,
    );
  const keepRecent = intOption(values["keep-recent"], "keep-recent", 60);
  if (keepRecent < 0) throw new UsageError("--keep-recent takes a number of minutes, 0 or more");
  const project = projectOf(values);
  const view = await import("../cache-view.js");
  switch (action) {
    case "status":
      return view.status(project, Boolean(values.json));
    case "push":
    case "pull":
      return view.transfer(project, action, Boolean(values.json));
    default:
      return view.gc(project, keepRecent * 60_000, Boolean(values["dry-run"]), Boolean(values.json));
  }
}

async function batches(extra: string[], values: Record<string, unknown>): Promise<number> {
  const registry = (values.registry as string[] | undefined) ?? [];
  const json = Boolean(values.json);
  if (values["dry-run"] || values["keep-recent"] !== undefined)
    throw new UsageError("--dry-run and --keep-recent are options of `cache gc`, not of `cache batches`");
  const view = await import("../batches-view.js");
  if (extra.length === 0) return view.listBatches(projectOf(values), registry, json);
  if (extra[0] === "cancel" && extra.length === 2)
    return view.cancelBatch(projectOf(values), extra[1]!, registry, json);
  throw usageError(command, "cache batches takes nothing, or `cancel ID`");
}

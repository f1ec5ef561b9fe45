// download: the release files, each identified by its SHA-256
// (a moved URL with the same hash changes nothing).
// Sources, first that applies: --data-dir (a release the user downloaded), `base_url`, the bundled `sample`.
import {
  closeSync,
  createWriteStream,
  openSync,
  writeSync,
  existsSync,
  statSync,
  accessSync,
  constants,
  readFileSync,
  createHash,
} from "../src/util/builtins.js";
import { isAbsolute, resolve } from "node:path";
import { staysInside } from "../src/util/paths.js";
import { sha256FileSync } from "../src/hash/sha256.js";
import {
  type StageContext,
  type StageKind,
  type StageOutput,
  type StageProblem,
} from "../src/contract/stage.js";
import { StageError } from "../src/errors.js";
import { consult } from "../src/util/consulted.js";
import { REDACTED, urlUserinfo } from "../src/model/redact.js";

interface Params {
  source: string; // label of the real release, e.g. khdp/kor-surgical-robot-voice-command
  files: Record<string, string | null>; // release path -> sha256 (null: not published; trusted on first use)
  pins_file?: string; // project file with "sha256  path" lines, for long lists
  base_url?: string;
  sample?: { dir: string; label: string; files: Record<string, string> };
}

type Where =
  | { kind: "dir"; dir: string; label: string; pins: Record<string, string | null> }
  | { kind: "url"; base: string; label: string; pins: Record<string, string | null> };

function params(ctx: StageContext): Params {
  return ctx.params as unknown as Params;
}

function pinsOf(ctx: StageContext): Record<string, string | null> {
  const settings = params(ctx);
  const pins: Record<string, string | null> = { ...(settings.files ?? {}) };
  if (settings.pins_file) {
    const file = inside(ctx.options.projectRoot, settings.pins_file, "pins_file");
    consult(file);
    const text = readFileSync(file, "utf8");
    for (const line of text.split("\n")) {
      const match = /^([0-9a-f]{64}) [ *](.+)$/.exec(line.trimEnd());
      if (match) pins[match[2]!] = match[1]!;
    }
  }
  return pins;
}

function where(ctx: StageContext): Where {
  const settings = params(ctx);
  const pins = pinsOf(ctx);
  if (ctx.options.dataDir) {
    const dir = resolve(ctx.options.dataDir);
    consult(dir);
    try {
      if (!statSync(dir).isDirectory()) throw new Error("not a directory");
      accessSync(dir, constants.R_OK | constants.X_OK);
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
      throw new StageError(
        `--data-dir ${ctx.options.dataDir} cannot be read (${why})`,
        "point --data-dir (or MEDBENCH_DATA_DIR) at the folder that holds the release files",
      );
    }
    return { kind: "dir", dir, label: settings.source, pins };
  }
  if (settings.base_url) return { kind: "url", base: settings.base_url, label: settings.source, pins };
  if (settings.sample) {
    const files: Record<string, string | null> = {};
    for (const path of Object.keys(pins)) files[path] = settings.sample.files[path] ?? null;
    return {
      kind: "dir",
      dir: inside(ctx.options.projectRoot, settings.sample.dir, "sample dir"),
      label: settings.sample.label,
      pins: files,
    };
  }
  throw new StageError(
    `no source for ${settings.source}: it needs a login to download`,
    "download the release yourself and pass --data-dir DIR (or set MEDBENCH_DATA_DIR)",
  );
}

function inside(base: string, rel: string, what: string): string {
  if (!staysInside(base, rel))
    throw new StageError(`${what} ${rel} escapes ${base}`, "keep it inside the project");
  return resolve(base, rel);
}

/** Checks a content hash against its pin, or against what was trusted on first use. */
function check(ctx: StageContext, origin: Where, path: string, actual: string): void {
  const pin = origin.pins[path];
  if (pin) {
    if (pin !== actual)
      throw new StageError(
        `${path}: sha256 mismatch\n  expected ${pin}\n  actual   ${actual}\n` +
          `  (from ${origin.kind === "dir" ? origin.dir : origin.base})`,
        "use the release version the spec pins, or update the pin in the spec if the release really changed",
      );
    ctx.pins.record(origin.label, path, actual);
    return;
  }
  const trusted = ctx.pins.recorded(origin.label, path);
  if (trusted && trusted !== actual && !ctx.options.trustChanged) {
    throw new StageError(
      `${path} changed since it was trusted on first use\n  recorded ${trusted}\n  actual   ${actual}`,
      "if the new file is right, run again with --trust-changed; " +
        "otherwise restore the original release file",
    );
  }
  if (!trusted)
    ctx.emit({
      type: "warning",
      stage: ctx.stage,
      message:
        `${path}: no published pin; trusted on first use as ${actual.slice(0, 16)}… ` +
        "(recorded in medbench.lock)",
    });
  else if (trusted !== actual)
    ctx.emit({
      type: "warning",
      stage: ctx.stage,
      message: `${path}: changed and accepted with --trust-changed (was ${trusted.slice(0, 16)}…)`,
    });
  ctx.pins.record(origin.label, path, actual);
}

function localFile(origin: Extract<Where, { kind: "dir" }>, path: string): string {
  const abs = inside(origin.dir, path, "release file");
  consult(abs);
  if (!existsSync(abs))
    throw new StageError(
      `${path} is missing from ${origin.dir}`,
      "use the complete release (every file the spec lists), or correct --data-dir",
    );
  return abs;
}

function fileUrl(base: string, path: string): string {
  return base.replace(/\/?$/, "/") + path.split("/").map(encodeURIComponent).join("/");
}

// node:stream loads when a file is fetched or copied, not on every build (a no-op build copies nothing).
async function hashingTap(hash: ReturnType<typeof createHash>) {
  const { Transform } = await import("node:stream");
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      callback(null, chunk);
    },
  });
}

async function fetchTo(url: string, dest: string, timeoutMs = 120_000): Promise<string> {
  const { Readable } = await import("node:stream");
  const { pipeline } = await import("node:stream/promises");
  const hash = createHash("sha256");
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) }).catch((e: unknown) => {
    throw unreachable(url, e);
  });
  if (!res.ok || !res.body)
    throw new StageError(
      `GET ${url}: HTTP ${res.status}`,
      "check the URL or your network, or pass --data-dir with a local copy",
    );
  const tap = await hashingTap(hash);
  await intoFile(dest, (file) =>
    pipeline(Readable.fromWeb(res.body as import("node:stream/web").ReadableStream), tap, file),
  );
  return hash.digest("hex");
}

/**
 * Runs a pipeline ending in a new file `dest`. pipeline() rejects as soon as a source fails (a dropped
 * connection), possibly before the file stream it destroys has even opened: wait for that stream to close,
 * so that the caller's removal of the temporary file comes after the file exists, never before.
 */
async function intoFile(
  dest: string,
  run: (file: ReturnType<typeof createWriteStream>) => Promise<void>,
): Promise<void> {
  const file = createWriteStream(dest);
  try {
    await run(file);
  } catch (e) {
    if (!file.closed) await new Promise<void>((done) => file.once("close", () => done()));
    throw e;
  }
}

/** fetch() says only "fetch failed": name the URL, what the network answered, and the offline way. */
function unreachable(url: string, e: unknown): StageError {
  const err = e as { name?: string; cause?: { code?: string; message?: string } };
  const what =
    err.name === "TimeoutError"
      ? "no answer in time"
      : `the network is unreachable (${err.cause?.code ?? err.cause?.message ?? String(e)})`;
  return new StageError(
    `GET ${url}: ${what}`,
    "connect to the network and build again, or download the release yourself and pass --data-dir DIR " +
      "(or MEDBENCH_DATA_DIR); it is still checked against the spec's pins",
  );
}

/** Copies src to dest, hashing it as it goes (a chunk at a time, never whole). */
function copyHashing(src: string, dest: string): string {
  const fd = openSync(dest, "w");
  try {
    return sha256FileSync(src, (chunk) => {
      for (let written = 0; written < chunk.length; )
        written += writeSync(fd, chunk, written, chunk.length - written);
    });
  } finally {
    closeSync(fd);
  }
}

const SHA256 = "^[0-9a-f]{64}$";

export const download: StageKind = {
  kind: "download",
  inBundle: "data",
  inputs: {},
  outputs: "release",
  required: ["source"],
  params: {
    source: { type: "string", description: "a label of the real release, e.g. khdp/NAME" },
    files: {
      type: "object",
      additionalProperties: { type: ["string", "null"], pattern: SHA256 },
      description: "release path: sha256, or null (trusted on first use)",
    },
    pins_file: { type: "string", description: "a project file of `sha256  path` lines" },
    base_url: { type: "string", pattern: "^https?://" },
    sample: {
      type: "object",
      required: ["dir", "label", "files"],
      properties: {
        dir: { type: "string" },
        label: { type: "string" },
        files: { type: "object", additionalProperties: { type: "string", pattern: SHA256 } },
      },
    },
  },

  check(stage) {
    const settings = stage.params as unknown as Params;
    return [...urlProblems(settings), ...pathProblems(settings)];
  },

  dataSource(ctx) {
    const origin = where(ctx);
    const settings = params(ctx);
    return {
      label: origin.label,
      sample: !ctx.options.dataDir && !settings.base_url && origin.kind === "dir",
      hasSample: settings.sample !== undefined,
    };
  },

  async identify(ctx) {
    const origin = where(ctx);
    const files: Record<string, string | null> = {};
    for (const path of Object.keys(origin.pins).sort()) {
      if (origin.kind === "dir") {
        const actual = await ctx.hashFile(localFile(origin, path));
        check(ctx, origin, path, actual);
        files[path] = actual;
      } else {
        files[path] = origin.pins[path] ?? ctx.pins.recorded(origin.label, path) ?? null;
      }
    }
    return { source: origin.label, files };
  },

  async run(ctx) {
    const origin = where(ctx);
    const out: Record<string, StageOutput> = {};
    const paths = Object.keys(origin.pins).sort();
    let done = 0;
    const one = async (path: string) => {
      const tmp = ctx.tempPath();
      const actual =
        origin.kind === "dir"
          ? copyHashing(localFile(origin, path), tmp)
          : await fetchTo(fileUrl(origin.base, path), tmp);
      check(ctx, origin, path, actual);
      out[path] = { file: tmp, sha256: actual };
      done++;
      if (paths.length > 20 && done % 100 === 0)
        ctx.emit({ type: "progress", stage: ctx.stage, done, total: paths.length, retries: 0, errors: 0 });
    };
    const queue = [...paths];
    const workers = Array.from({ length: origin.kind === "url" ? 8 : 1 }, async () => {
      while (queue.length) await one(queue.shift()!);
    });
    await Promise.all(workers);
    return out;
  },
};

/** A user name or password in base_url would be kept in the spec's hash, the lock, the bundle and every
 *  message naming the URL: refused, as a model route's is (src/model/registry.ts), without echoing it. */
function urlProblems(settings: Params): StageProblem[] {
  const userinfo = typeof settings.base_url === "string" ? urlUserinfo(settings.base_url) : null;
  if (userinfo === null) return [];
  const redacted = settings.base_url!.split(userinfo).join(REDACTED);
  return [
    {
      pointer: "/params/base_url",
      message:
        `base_url ${redacted} carries a user name or password, which ` +
        "medbench would keep in the spec's hash, medbench.lock, bundles and messages",
      fix:
        "remove it from the URL; for a release behind a login, download it yourself and build with " +
        "--data-dir DIR",
      secret: userinfo,
    },
  ];
}

/** Release paths (and the sample's folder) name files below their folder: never absolute, never `..`, so a
 *  spec cannot make a build hash or read a file elsewhere (`../../etc/hostname`). A sample pin names a
 *  release file: one that names none would pin nothing. Checked with the spec, before anything runs. */
function pathProblems(settings: Params): { pointer: string; message: string; fix: string }[] {
  const leaves = (path: string) =>
    path === "" || isAbsolute(path) || /^[A-Za-z]:/.test(path) || path.split(/[\\/]/).includes("..");
  const key = (token: string) => token.replace(/~/g, "~0").replace(/\//g, "~1");
  const fix = "write the path relative to the release folder, without `..` (e.g. benchmark/items.jsonl)";
  const out: { pointer: string; message: string; fix: string }[] = [];
  for (const path of Object.keys(settings.files ?? {}))
    if (leaves(path))
      out.push({
        pointer: `/params/files/${key(path)}`,
        message: `release path ${path} leaves the release`,
        fix,
      });
  if (!settings.sample) return out;
  if (typeof settings.sample.dir === "string" && leaves(settings.sample.dir))
    out.push({
      pointer: "/params/sample/dir",
      message: `sample dir ${settings.sample.dir} leaves the project`,
      fix: "keep the sample inside the project (e.g. specs/<task>/sample)",
    });
  for (const path of Object.keys(settings.sample.files ?? {})) {
    if (leaves(path))
      out.push({
        pointer: `/params/sample/files/${key(path)}`,
        message: `sample path ${path} leaves the sample folder`,
        fix,
      });
    else if (settings.files && !settings.pins_file && !(path in settings.files))
      out.push({
        pointer: `/params/sample/files/${key(path)}`,
        message: `sample path ${path} is not a release file of \`files\``,
        fix: `pin one of: ${Object.keys(settings.files).join(", ")}`,
      });
  }
  return out;
}

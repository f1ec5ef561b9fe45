// What an isolated stage's process (src/runner/code/isolated-host.ts) changes in itself before any task or
// stage code loads: the clock is fixed, randomness is drawn from the stage's key, and what Node's
// permission model does not cover is closed here: the network (fetch, sockets, DNS), new V8 contexts (each
// would have a clock and a random of its own), and the facts of the host (its name, users, load). File reads
// are the permission model's (--allow-fs-read); every read it refuses is also recorded here, so that code
// which catches the error still fails its stage. docs/records.md, "Task code runs isolated".

// Node's permission model refuses fsync, which medbench's writers call once a file is whole: here it does
// nothing, and medbench's process syncs each output file it receives (isolation.ts). Done as this module
// loads, before medbench's fs wrappers (src/util/builtins.ts) take their copies.
if ((process as { permission?: unknown }).permission) {
  const fs = require("node:fs") as Record<string, unknown>;
  for (const name of ["fsyncSync", "fdatasyncSync"]) fs[name] = () => {};
}

/** The fixed clock of every isolated stage: 2000-01-01T00:00:00Z. */
export const FIXED_TIME_MS = 946_684_800_000;

/** Thrown by what isolation closes; the stage fails with its message and fix. */
export class Closed extends Error {
  constructor(
    what: string,
    readonly fix: string,
  ) {
    super(`${what}: stage code runs isolated, without it (docs/records.md, "Task code runs isolated")`);
  }
}

/** A read the permission model refused, with the path it named. */
export const refusedReads: string[] = [];

/** sfc32 seeded from 16 bytes of the stage key: the same draws for the same key, on every machine. */
export function seededRandom(keyHex: string): () => number {
  const state = new Uint32Array(
    [0, 8, 16, 24].map((at) => parseInt(keyHex.slice(at, at + 8).padEnd(8, "0"), 16) >>> 0),
  );
  const next = (): number => {
    const out = (state[0]! + state[1]! + state[3]!) >>> 0;
    state[3] = state[3]! + 1;
    state[0] = state[1]! ^ (state[1]! >>> 9);
    state[1] = state[2]! + (state[2]! << 3);
    state[2] = ((state[2]! << 21) | (state[2]! >>> 11)) + out;
    return out;
  };
  for (let i = 0; i < 15; i++) next();
  return () => next() / 4294967296;
}

const closed = (what: string, fix: string) => (): never => {
  throw new Closed(what, fix);
};

const NETWORK_FIX =
  "compute from the stage's inputs: data the task needs is a stage input of the spec (`{ file: … }`), " +
  "and a model is asked by the model stage";

/** Replaces `owner[name]` (a function) by one that throws. */
function close(owner: object, name: string, what: string, fix: string): void {
  Object.defineProperty(owner, name, { value: closed(what, fix), writable: false, configurable: false });
}

function fixClock(): void {
  const Real = Date;
  function FixedDate(this: unknown, ...args: unknown[]): unknown {
    if (!new.target) return new Real(FIXED_TIME_MS).toString();
    return args.length
      ? Reflect.construct(Real, args, new.target)
      : Reflect.construct(Real, [FIXED_TIME_MS]);
  }
  Object.setPrototypeOf(FixedDate, Real);
  FixedDate.prototype = Real.prototype;
  Object.defineProperty(FixedDate, "now", { value: () => FIXED_TIME_MS });
  Object.defineProperty(Real.prototype, "constructor", { value: FixedDate });
  (globalThis as { Date: unknown }).Date = FixedDate;
  const perf = globalThis.performance as unknown as Record<string, unknown>;
  Object.defineProperty(perf, "now", { value: () => 0 });
  Object.defineProperty(perf, "timeOrigin", { value: FIXED_TIME_MS });
  // Marks, measures and the loop's use stamp Node's own clock, not performance.now.
  const timing = "measure in the stage's own counts, not in time";
  for (const name of ["mark", "measure", "timerify", "eventLoopUtilization"])
    close(perf, name, `performance.${name}() reads the machine's clock`, timing);
  fixDateFormats();
  const hrtime = Object.assign(() => [0, 0], { bigint: () => 0n });
  Object.defineProperty(process, "hrtime", { value: hrtime });
  Object.defineProperty(process, "uptime", { value: () => 0 });
}

/** A date format given no date formats the fixed time (V8 would take its own clock's). */
function fixDateFormats(): void {
  const proto = Intl.DateTimeFormat.prototype;
  const format = Object.getOwnPropertyDescriptor(proto, "format")!.get!;
  Object.defineProperty(proto, "format", {
    get(this: Intl.DateTimeFormat) {
      const bound = format.call(this) as (date?: unknown) => string;
      return (date?: unknown) => bound(date === undefined ? FIXED_TIME_MS : date);
    },
  });
  const toParts = proto.formatToParts;
  Object.defineProperty(proto, "formatToParts", {
    value(this: Intl.DateTimeFormat, date?: Date | number) {
      return toParts.call(this, date === undefined ? FIXED_TIME_MS : date);
    },
  });
}

/** What makes keys or primes draws from the machine's randomness too. */
const KEY_MAKERS = [
  "generateKey",
  "generateKeySync",
  "generateKeyPair",
  "generateKeyPairSync",
  "generatePrime",
  "generatePrimeSync",
  "createDiffieHellman",
  "getDiffieHellman",
  "createECDH",
];

/** Math.random's draws: from the stage's key once its job arrives (`seedDraws`). */
let draws: (() => number) | null = null;

/** Math.random draws from the stage's key: set when the job arrives, after the process was locked down. */
export function seedDraws(keyHex: string): void {
  draws = seededRandom(keyHex);
}

function seedRandom(): void {
  const random = (): number => {
    if (!draws) throw new Error("internal: a random draw before the stage's key is known");
    return draws();
  };
  Object.defineProperty(Math, "random", { value: random, writable: false });
  const fix = "draw from Math.random, which is seeded from the stage's key, or from the stage's own seed";
  const crypto = require("node:crypto") as Record<string, unknown>;
  for (const name of [
    "randomBytes",
    "randomFillSync",
    "randomFill",
    "randomInt",
    "randomUUID",
    ...KEY_MAKERS,
  ])
    close(crypto, name, `crypto.${name}() draws from the machine's randomness`, fix);
  const subtle = Object.getPrototypeOf(globalThis.crypto.subtle) as Record<string, unknown>;
  close(subtle, "generateKey", "crypto.subtle.generateKey() draws from the machine's randomness", fix);
  // The module's getRandomValues (a getter that cannot be replaced) calls Web Crypto's, closed here.
  const web = Object.getPrototypeOf(globalThis.crypto) as Record<string, unknown>;
  for (const name of ["getRandomValues", "randomUUID"])
    close(web, name, `crypto.${name}() draws from the machine's randomness`, fix);
}

function closeNetwork(): void {
  const net = require("node:net") as typeof import("node:net");
  close(net.Socket.prototype, "connect", "a network connection", NETWORK_FIX);
  close(net.Server.prototype, "listen", "a network server", NETWORK_FIX);
  const dgram = require("node:dgram") as typeof import("node:dgram");
  for (const name of ["bind", "send", "connect"])
    close(dgram.Socket.prototype, name, "a network datagram", NETWORK_FIX);
  const dns = require("node:dns") as Record<string, unknown> & {
    promises: object;
    Resolver: { prototype: object };
  };
  for (const owner of [dns, dns.promises])
    for (const name of ["lookup", "lookupService", "resolve", "resolve4", "resolve6", "reverse"])
      close(owner, name, "a DNS lookup", NETWORK_FIX);
  close(dns.Resolver.prototype, "resolve", "a DNS lookup", NETWORK_FIX);
  for (const name of ["fetch", "WebSocket", "EventSource"])
    if (name in globalThis) close(globalThis, name, `${name}()`, NETWORK_FIX);
}

/** A context of its own would bring a clock and a random of its own; the deadline's is made before. */
function closeContexts(): void {
  const vm = require("node:vm") as Record<string, unknown> & { Script: { prototype: object } };
  const fix = "compute in the module itself (eval and new Function run in the stage's own context)";
  for (const name of ["createContext", "runInNewContext", "measureMemory"])
    close(vm, name, `vm.${name}()`, fix);
  close(vm.Script.prototype, "runInNewContext", "vm.Script#runInNewContext()", fix);
}

function closeHost(): void {
  const os = require("node:os") as Record<string, unknown>;
  const fix = "a setting the task needs is a parameter of the spec, or a declared environment variable";
  for (const name of [
    "hostname",
    "userInfo",
    "homedir",
    "networkInterfaces",
    "cpus",
    "freemem",
    "totalmem",
    "loadavg",
    "uptime",
    "availableParallelism",
  ])
    close(os, name, `os.${name}() reads the machine`, fix);
  for (const name of ["memoryUsage", "resourceUsage", "cpuUsage"])
    close(process, name, `process.${name}() reads the machine`, fix);
  for (const [name, value] of [
    ["pid", 1],
    ["ppid", 0],
  ] as const)
    Object.defineProperty(process, name, { value, writable: false });
  if (process.report) close(process.report, "getReport", "process.report reads the machine", fix);
}

/** Records the path of an error the permission model threw (or passed on), once. */
function noteRefusal(e: unknown): void {
  const error = e as { code?: unknown; resource?: unknown } | null;
  if (error?.code !== "ERR_ACCESS_DENIED") return;
  const path = typeof error.resource === "string" ? error.resource : "(a path)";
  if (!refusedReads.includes(path)) refusedReads.push(path);
}

/** fs's function, recording each refusal it throws, passes to its callback or rejects with. */
function watched(original: (...args: unknown[]) => unknown, name: string): (...args: unknown[]) => unknown {
  const wrapper = function (this: unknown, ...args: unknown[]): unknown {
    const last = args.length - 1;
    if (typeof args[last] === "function") {
      const callback = args[last] as (...results: unknown[]) => unknown;
      args[last] = (...results: unknown[]) => (noteRefusal(results[0]), callback(...results));
    }
    try {
      const out = original.apply(this, args);
      if (out instanceof Promise) return out.catch((e: unknown) => (noteRefusal(e), Promise.reject(e)));
      return out;
    } catch (e) {
      noteRefusal(e);
      throw e;
    }
  };
  Object.defineProperty(wrapper, "name", { value: name });
  return Object.assign(wrapper, original); // realpathSync.native and the like stay
}

/** Each fs function records a read the permission model refused (code may catch the error itself). Classes
 *  (ReadStream…) are left as they are and not even read: their getters load Node's streams (5 to 13 ms). */
function watchReads(): void {
  const fs = require("node:fs") as Record<string, unknown> & { promises: Record<string, unknown> };
  for (const owner of [fs, fs.promises])
    for (const name of Object.keys(owner)) {
      if (/^[A-Z]/.test(name)) continue;
      const value = owner[name];
      if (typeof value === "function") owner[name] = watched(value as (...args: unknown[]) => unknown, name);
    }
}

/** Everything above, in the order that leaves nothing open before stage or task code loads; Math.random
 *  draws once `seedDraws` is given the stage's key. */
export function lockDown(): void {
  fixClock();
  seedRandom();
  closeNetwork();
  closeContexts();
  closeHost();
  watchReads();
}

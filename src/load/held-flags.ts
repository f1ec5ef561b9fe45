// V8 flags a command sets as it runs (src/load/small-run-heap.ts holds them for a small run). Any V8 flag
// away from its default changes V8's flag hash, and Node then refuses its built-in modules' code cache:
// each built-in loaded after is compiled from its source (http, https, zlib, child_process, vm, perf_hooks
// and tty: 16.5 ms of CPU against 5.8, docs/performance.md, "Where a first build's time goes"). So while a
// built-in Node has not loaded yet is required, and while the global `performance` is first read, every
// held flag is back at V8's own value.

/** The flags that can be held, each with V8's own value. */
const OWN = { "semi-space-growth-factor": 2, "interrupt-budget": 67_584 };
type Flag = keyof typeof OWN;

// Loaded when first needed: a command that runs no stage (a no-op build, status) sets no flag.
export const v8 = () => require("node:v8") as typeof import("node:v8");
const held = new Map<Flag, number>();
const set = (flag: Flag, value: number) => v8().setFlagsFromString(`--${flag}=${value}`);

/** Whether the user set the flag on Node's command line (NODE_OPTIONS takes neither flag). */
const userSet = (flag: Flag) =>
  process.execArgv.some((arg) => new RegExp(`^--${flag}(=|$)`).test(arg.replace(/_/g, "-")));

/** Sets the flag to `value` until it is released; built-ins keep loading from Node's code cache. A flag the
 *  user set stays at their value. */
export function holdFlag(flag: Flag, value: number): void {
  if (userSet(flag)) return;
  loadBuiltinsAtDefault();
  held.set(flag, value);
  set(flag, value);
}

/** The flag back at V8's own value. */
export function releaseFlag(flag: Flag): void {
  if (!held.delete(flag)) return;
  set(flag, OWN[flag]);
}

/** `load` run with every held flag at V8's own, so that the built-ins it loads come from Node's code cache.
 *  A load takes a few ms; a young collection within it may let one growth through (memory, never a
 *  result). */
function atDefault<T>(load: () => T): T {
  if (!held.size) return load();
  for (const flag of held.keys()) set(flag, OWN[flag]);
  try {
    return load();
  } finally {
    for (const [flag, value] of held) set(flag, value);
  }
}

type Load = (request: string, ...rest: unknown[]) => unknown;
const loader = () => require("node:module") as { _load: Load; isBuiltin: (request: string) => boolean };
/** Whether Node has loaded the built-in (its list names each as `NativeModule fs`). */
const wasLoaded = (request: string) =>
  (process as unknown as { moduleLoadList: string[] }).moduleLoadList.includes(
    `NativeModule ${request.replace(/^node:/, "")}`,
  );
let hooked = false;

/** From here on, a built-in is loaded at V8's own flags: when it is required and Node has not loaded it
 *  yet, and the global `performance` at its first read (Node loads perf_hooks then). */
function loadBuiltinsAtDefault(): void {
  if (hooked) return;
  hooked = true;
  v8(); // loaded before the hook: setting a flag loads nothing
  const moduleLoader = loader();
  const load = moduleLoader._load;
  moduleLoader._load = function (this: unknown, request: string, ...rest: unknown[]) {
    if (!held.size || !moduleLoader.isBuiltin(request) || wasLoaded(request))
      return load.call(this, request, ...rest);
    return atDefault(() => load.call(this, request, ...rest));
  };
  const lazy = Object.getOwnPropertyDescriptor(globalThis, "performance");
  const read = lazy?.get;
  if (!read) return;
  Object.defineProperty(globalThis, "performance", {
    ...lazy,
    get(this: unknown) {
      Object.defineProperty(globalThis, "performance", lazy);
      return atDefault(() => read.call(this));
    },
  });
}

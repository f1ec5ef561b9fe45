// V8 lets the young generation grow to 16 MB per semi-space under a build's allocation: most of a small run's
// peak memory (a 2,070-item build peaks near 140 MB; held at 4 MB, near 100, and no slower). The flag for it,
// --max-semi-space-size, is read only as Node starts, and any such flag costs every command, a no-op too,
// about 15 ms of start-up (Node then refuses its built-in code cache). The growth factor, read at each
// growth, can be set as the process runs. So, once a command has stages to run: let the young generation grow
// to 4 MB per semi-space at most, then no more (docs/performance.md, seventh round). Its size is looked at
// each event-loop turn or so; a long synchronous stretch can still let it grow past, which costs only memory.

const HELD_SEMI_SPACE = 4 * 2 ** 20;
let held = false;

/** Holds the young generation at 4 MB per semi-space from now on, unless the user's own flags size it.
 *  Called when a command starts its first stage; later calls do nothing. */
export function holdYoungGeneration(): void {
  if (held) return;
  held = true;
  const flags = `${process.env.NODE_OPTIONS ?? ""} ${process.execArgv.join(" ")}`;
  if (/semi[-_]space/.test(flags)) return;
  // Loaded here: setting a V8 flag makes Node refuse its code cache for what loads after, so a command that
  // runs no stage (a no-op build, status) never sets one.
  const v8 = require("node:v8") as typeof import("node:v8");
  const semiSpace = () =>
    (v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.space_size ?? 0) / 2;
  // V8 doubles it at each growth, each one after as many bytes have survived as it holds: left at its own
  // pace until 4 MB, looked at every 2 ms, then growth stops (a factor of 1).
  const stopGrowth = () => v8.setFlagsFromString("--semi-space-growth-factor=1");
  if (semiSpace() >= HELD_SEMI_SPACE) return stopGrowth();
  const watch = setInterval(() => {
    if (semiSpace() < HELD_SEMI_SPACE) return;
    stopGrowth();
    clearInterval(watch);
  }, 2);
  watch.unref();
}

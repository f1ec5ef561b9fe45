// A clock-free measure of how much a piece of code walks: the elements it goes through with Array
// methods (filter, some, map, includes, ...) and Array.from, with Object.keys / entries / values (each call
// counts the names it lists), and in typed arrays it creates (each `new Float64Array(n)` or
// `Float64Array.from(xs)` counts its length: a numeric solver's steps). Run on n and 8n items, a linear part
// walks about 8 times as much, one with a term in n² about 64 times.
import type { ReplyRecord } from "../../tasks/task.js";

const WALKERS = [
  "filter",
  "some",
  "every",
  "map",
  "flatMap",
  "forEach",
  "find",
  "findIndex",
  "reduce",
  "includes",
  "indexOf",
] as const;
const LISTERS = ["keys", "entries", "values"] as const;
const TYPED = ["Float64Array", "Int32Array"] as const;
type Fn = (...args: unknown[]) => unknown;

/** A method more to count: `owner[name]`, each call counting `size(args)` elements (e.g. random draws). */
export type Counted = [owner: object, name: string, size: (args: unknown[]) => number];

/** Elements walked while `f` runs (everything patched is restored before it returns, thrown or not). */
export function walked(f: () => void, more: Counted[] = []): number {
  let count = 0;
  const undo: (() => void)[] = [];
  const patch = <T extends object>(owner: T, name: string, wrap: (original: Fn) => Fn) => {
    const o = owner as Record<string, unknown>;
    const original = o[name] as Fn;
    o[name] = wrap(original);
    undo.push(() => (o[name] = original));
  };
  for (const name of WALKERS)
    patch(
      Array.prototype,
      name,
      (original) =>
        function (this: unknown[], ...args: unknown[]) {
          count += this.length;
          return original.apply(this, args);
        },
    );
  patch(
    Array,
    "from",
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        const out = original.apply(this, args) as unknown[];
        count += out.length;
        return out;
      },
  );
  for (const [owner, name, size] of more)
    patch(
      owner,
      name,
      (original) =>
        function (this: unknown, ...args: unknown[]) {
          count += size(args);
          return original.apply(this, args);
        },
    );
  for (const name of LISTERS)
    patch(Object, name, (original) => (o: unknown) => {
      const out = original(o) as unknown[];
      count += out.length;
      return out;
    });
  const g = globalThis as unknown as Record<string, unknown>;
  for (const name of TYPED) {
    const Typed = g[name] as Float64ArrayConstructor;
    const from = Typed.from.bind(Typed);
    const counted = new Proxy(Typed, {
      construct(target, args: unknown[]) {
        const made = Reflect.construct(target, args) as Float64Array;
        count += made.length;
        return made;
      },
      get(target, key) {
        if (key === "from")
          return (...args: Parameters<typeof from>) => {
            const made = from(...args);
            count += made.length;
            return made;
          };
        return Reflect.get(target, key);
      },
    });
    g[name] = counted;
    undo.push(() => (g[name] = Typed));
  }
  try {
    f();
  } finally {
    for (const u of undo.reverse()) u();
  }
  return count;
}

/** A model's reply as the complexity tests' synthetic runs give it to a parser or scorer. */
export const syntheticReply = (id: string, text: string): ReplyRecord =>
  ({
    id,
    request_sha256: null,
    format: "none",
    text,
    error: null,
    finish_reason: "stop",
    reasoning: false,
    think: false,
  }) as ReplyRecord;

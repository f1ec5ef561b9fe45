import { parseArgs } from "../util/builtins.js";
import type { ParseArgsConfig } from "node:util";

export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig["options"]>;

/** node:util parseArgs with usage errors as UsageError (exit 2), never a stack trace. */
export function parse<O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

export function intOption(v: string | undefined, name: string, dflt: number): number {
  if (v === undefined) return dflt;
  if (!/^-?\d+$/.test(v)) throw new UsageError(`--${name} takes a whole number, not ${JSON.stringify(v)}`);
  return Number(v);
}

export function floatOption(v: string | undefined, name: string, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new UsageError(`--${name} takes a number, not ${JSON.stringify(v)}`);
  return n;
}

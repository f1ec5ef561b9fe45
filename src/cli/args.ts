import { parseArgs } from "../util/builtins.js";
import type { ParseArgsConfig } from "node:util";
import { UsageError } from "../errors.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * node:util parseArgs with usage errors as UsageError (exit 2), never a stack trace. A flag the command
 * does not take is refused by name, with the flags it does take (`command` as typed, e.g. "stats ci").
 */
export function parse<O extends Options>(argv: string[], options: O, command?: string) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    const err = e as Error & { code?: string };
    const flag = /Unknown option '([^']+)'/.exec(err.message)?.[1];
    if (err.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && flag && command)
      throw new UsageError(
        `${command} does not take ${flag}; its options: ` +
          Object.entries(options)
            .map(([name, option]) => (option.short ? `-${option.short}/--${name}` : `--${name}`))
            .join(", "),
      );
    throw new UsageError(err.message);
  }
}

export function intOption(value: string | undefined, name: string, dflt: number): number {
  if (value === undefined) return dflt;
  if (!/^-?\d+$/.test(value))
    throw new UsageError(`--${name} takes a whole number, not ${JSON.stringify(value)}`);
  return Number(value);
}

export function floatOption(value: string | undefined, name: string, dflt: number): number {
  if (value === undefined) return dflt;
  const parsed = Number(value);
  if (!Number.isFinite(parsed))
    throw new UsageError(`--${name} takes a number, not ${JSON.stringify(value)}`);
  return parsed;
}

// One CLI command: its place in the main help, its own help, and what it runs.
import { medbenchVersion } from "../util/paths.js";
import { UsageError } from "../errors.js";

/** A command's main-help line (synopsis, summary) is in commands/index.ts, beside its loader. */
export interface Command {
  /** The text `medbench <command> --help` prints. */
  help: string;
  run(argv: string[]): Promise<number>;
}

/** A usage mistake, with the command's help below it (exit 2). */
export function usageError(command: Command, message: string): UsageError {
  return new UsageError(`${message}\n\n${command.help.replace("<version>", medbenchVersion())}`);
}

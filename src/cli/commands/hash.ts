// medbench hash FILE: the spec_hash of a spec file or a medbench.kr task document.
import { parse } from "../args.js";
import { usageError, type Command } from "../command.js";
import { specOrBuiltIn } from "../options.js";

export const command: Command = {
  help: `usage: medbench hash FILE [--json]

  FILE is a spec file of specs/, the name of a built-in spec (voice-command), or a task document (JSON or
  YAML, an object with a \`spec\` member).`,
  run,
};

async function run(argv: string[]): Promise<number> {
  const { hashDocument } = await import("../../specfile/load.js");
  const { values, positionals } = parse(argv, { json: { type: "boolean" } }, "hash");
  if (positionals.length !== 1) throw usageError(command, "hash takes one file");
  const { specHash, published } = hashDocument(specOrBuiltIn(positionals[0]!, "hash", process.cwd()));
  if (values.json)
    process.stdout.write(
      JSON.stringify({
        spec_hash: specHash,
        published: published ?? null,
        matches: published ? published === specHash : null,
      }) + "\n",
    );
  else process.stdout.write(specHash + "\n");
  if (published && published !== specHash) {
    process.stderr.write(
      `warning: the document records spec_hash ${published}, but its spec hashes to ${specHash}\n`,
    );
    return 1;
  }
  return 0;
}

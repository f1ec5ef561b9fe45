// A replayed stage that stops on the bundle's own records (a replies line cut short, requests that are not
// JSON, a record of the wrong shape) failed on the bundle, not on medbench: verify refuses it, naming the
// member and the line, instead of ending in an internal error.
import { UsageError, StageError } from "../errors.js";

/** The first line of a bundled member that is not JSON, as `MEMBER line N: why`; null when the member is
 *  one JSON document or JSON lines throughout. */
export function badRecordLine(member: string, data: Buffer): string | null {
  const text = data.toString("utf8");
  try {
    JSON.parse(text);
    return null;
  } catch {
    // JSON lines (or damaged): looked at line by line
  }
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() === "") continue;
    try {
      JSON.parse(lines[i]!);
    } catch (e) {
      return `${member} line ${i + 1} is not a JSON record (${(e as Error).message})`;
    }
  }
  return null;
}

/** Runs one replayed stage; what it throws but a refusal of its own becomes a refusal naming the bundled
 *  members it read (`read`: member path -> bytes) and, when one is not JSON, its line. */
export async function replayOrRefuse<T>(
  stage: string,
  read: Map<string, Buffer>,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof UsageError) throw e;
    const why = e instanceof StageError && e.fix ? `${e.message} (${e.fix})` : (e as Error).message;
    const line = [...read].map(([member, data]) => badRecordLine(member, data)).find((x) => x !== null);
    throw new UsageError(
      `the bundle's records do not replay: stage ${stage} stopped: ` +
        (line ?? `reading ${[...read.keys()].join(", ") || "no bundled member"}, ${why}`) +
        ". A bundle as medbench exports it always replays: this one was edited or damaged (if it was not, " +
        "this is a bug in medbench: please report it)",
    );
  }
}

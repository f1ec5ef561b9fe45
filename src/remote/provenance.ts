// What a build read from the shared remote, by writer: stages and replies another machine wrote are trusted
// as they are (anyone who can write the bucket could have planted them), so a build says which, and whose
// they are (docs/remote-cache.md).
import { readByWriter } from "./opened.js";

/** The build's lines on the stages (of `stages`, by key) and replies it read from a remote, one per
 *  writer. */
export function remoteProvenance(stages: { name: string; key: string }[]): string[] {
  const lines: string[] = [];
  const nameOf = new Map(stages.map((stage) => [`${stage.key}.json`, stage.name]));
  const manifests = readByWriter("stages/");
  for (const [writer, names] of manifests?.writers ?? []) {
    const mine = names.flatMap((name) => nameOf.get(name) ?? []);
    if (mine.length)
      lines.push(
        `stages ${mine.join(", ")} came from the shared remote ${manifests!.remote}, written by ${writer}`,
      );
  }
  const replies = readByWriter("replies/requests/");
  for (const [writer, keys] of replies?.writers ?? [])
    lines.push(
      `${keys.length} model replies came from the shared remote ${replies!.remote}, written by ${writer}`,
    );
  return lines;
}

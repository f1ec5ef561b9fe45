// What differs between a published output and the one a replay recomputed: metric by metric for
// metrics.json, item by item for an items file, else the two hashes.
import { sha256Hex } from "../../hash/sha256.js";
import { jsonDiff, parseJsonLines, pointerWords, type Json } from "../../util/json.js";
import type { Difference } from "./types.js";

type Item = { id: string; meta: Record<string, Json>; verdicts: Record<string, Json> };

function itemDifferences(name: string, published: Buffer, recomputed: Buffer): Difference[] {
  const left = new Map(parseJsonLines<Item>(published.toString("utf8")).map((item) => [item.id, item]));
  const out: Difference[] = [];
  for (const item of parseJsonLines<Item>(recomputed.toString("utf8"))) {
    const was = left.get(item.id);
    if (!was) {
      out.push({ what: `${name} ${item.id}`, published: null, recomputed: item.verdicts });
      continue;
    }
    for (const diff of jsonDiff(was as unknown as Json, item as unknown as Json))
      out.push({
        what: `${name} ${item.id} ${pointerWords(diff.path)}`,
        published: diff.from,
        recomputed: diff.to,
      });
    left.delete(item.id);
  }
  for (const id of left.keys())
    out.push({ what: `${name} ${id}`, published: "(present)", recomputed: null });
  return out;
}

export function describe(name: string, published: Buffer | undefined, recomputed: Buffer): Difference[] {
  if (!published) return [{ what: `${name}: not in the bundle`, published: null, recomputed: "(present)" }];
  if (name.endsWith("metrics.json")) {
    const before = JSON.parse(published.toString("utf8")) as Json;
    const after = JSON.parse(recomputed.toString("utf8")) as Json;
    return jsonDiff(before, after).map((diff) => ({
      what: `${name} ${pointerWords(diff.path)}`,
      published: diff.from,
      recomputed: diff.to,
    }));
  }
  if (name.endsWith(".jsonl") && published.toString("utf8").includes('"verdicts"'))
    return itemDifferences(name, published, recomputed);
  return [
    {
      what: `${name}: bytes differ`,
      published: sha256Hex(published).slice(0, 16),
      recomputed: sha256Hex(recomputed).slice(0, 16),
    },
  ];
}

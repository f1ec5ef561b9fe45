// The partial check: a bundle's metrics.json that says `partial` (a --limit or --subset run) fails verify,
// naming how it was cut; a whole run, or a metrics.json that is not JSON (the outputs check's), passes it.
import { describe, expect, it } from "vitest";
import { checkPartial } from "../../src/bundle/verify/partial.js";
import type { BundleManifest } from "../../src/bundle/layout.js";

const manifest = { results: { "metrics.json": "bootstrap/metrics" } } as unknown as BundleManifest;
const published = (metrics: string) =>
  new Map([["bootstrap", new Map([["metrics", Buffer.from(metrics)]])]]);

describe("the partial check", () => {
  const CASES: [string, string, string | null][] = [
    ["a whole run", '{"metrics":{}}', null],
    ["a run cut with --limit", '{"partial":true,"selection":{"limit":2}}', "--limit 2"],
    ["a run cut with --subset", '{"partial":true,"selection":{"subset":["clean"]}}', '--subset ["clean"]'],
    ["both", '{"partial":true,"selection":{"limit":2,"subset":"clean"}}', '--limit 2 --subset "clean"'],
    ["partial without a selection", '{"partial":true}', "--limit or --subset"],
    ["metrics that are not JSON", "{", null],
  ];

  for (const [what, metrics, how] of CASES)
    it(what, () => {
      const check = checkPartial(published(metrics), manifest);
      if (how === null) return void expect(check).toBeNull();
      expect(check).toEqual({
        name: "partial",
        ok: false,
        lines: [
          `a partial run (${how}): what it holds may replay exactly, but a partial run is never the ` +
            "published result; build without --limit and --subset, and export that",
        ],
      });
    });
});

// A model stage says when its first request goes out: one progress event marked `sending` (the build's heap
// policy lets V8 optimise at its own pace from there, src/load/small-run-heap.ts), before any reply; none
// in a rebuild whose replies are all stored.
import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cleanedAfterEach } from "../support/rig.js";
import { projectAgainstFake } from "../support/fake-build.js";

const cleaned = cleanedAfterEach();

interface Progress {
  type: string;
  stage?: string;
  done?: number;
  total?: number;
  sending?: boolean;
}
const progressEvents = (stderr: string): Progress[] =>
  stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Progress)
    .filter((e) => e.type === "progress" && e.stage === "model");

describe("the model stage's first request", () => {
  it("is one progress event marked sending, at 0 done; a rebuild from stored replies has none", async () => {
    const { fake, p } = await projectAgainstFake(cleaned, {});
    const first = await p.buildAgainstFake();
    expect(first.exitCode, first.stderr).toBe(0);
    const events = progressEvents(first.stderr);
    const sending = events.filter((e) => e.sending);
    expect(sending).toHaveLength(1);
    expect(sending[0]!.done).toBe(0);
    expect(fake.stats.received.length).toBeGreaterThan(0);
    expect(events.indexOf(sending[0]!)).toBe(0);

    for (const stored of ["cache/stages", "cache/objects", "results"])
      rmSync(p.path(stored), { recursive: true, force: true });
    const sent = fake.stats.received.length;
    const rebuild = await p.buildAgainstFake();
    expect(rebuild.exitCode, rebuild.stderr).toBe(0);
    expect(fake.stats.received.length).toBe(sent);
    const again = progressEvents(rebuild.stderr);
    expect(again.length).toBeGreaterThan(0);
    expect(again.filter((e) => e.sending)).toEqual([]);
  });
});

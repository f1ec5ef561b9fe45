// The CLI's start-up stays close to Node's own (issue 10's no-op goal): src/ and stages/ take fs, crypto,
// url and util through src/util/builtins.ts, never by an ES import (scripts/bench/builtins.mjs).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { filesUnder, REPO } from "./helpers.js";

const VALUE_IMPORT = /^import\s+(?!type\b)[^;]*?from\s+"node:(fs|crypto|url|util)"/gm;

describe("start-up imports", () => {
  it("no module of src/ or stages/ ES-imports fs, crypto, url or util", () => {
    const files = ["src", "stages"]
      .flatMap((d) => filesUnder(join(REPO, d)))
      .filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(50);
    const offenders = files
      .filter((f) => !f.endsWith("src/util/builtins.ts"))
      .flatMap((f) => [...readFileSync(f, "utf8").matchAll(VALUE_IMPORT)].map((m) => `${f}: ${m[0]}`));
    expect(offenders).toEqual([]);
  });

  it("the check sees an ES import of node:fs", () => {
    expect('import { readFileSync } from "node:fs";'.match(VALUE_IMPORT)).not.toBeNull();
    expect('import type { Stats } from "node:fs";'.match(VALUE_IMPORT)).toBeNull();
  });
});

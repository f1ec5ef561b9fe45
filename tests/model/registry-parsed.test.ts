// The built-in route registry as medbench's build recorded it (dist/registry-parsed.json, written by
// scripts/compile-spec-schema.mjs) is registry/providers.yaml's routes as parsing and checking it gives
// them, for those very bytes (src/model/registry.ts takes it only when the file's sha256 is the one
// recorded).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { builtInRoutes, checkedRoutes, PARSED_REGISTRY } from "../../src/model/registry.js";
import { REPO } from "../support/helpers.js";

const file = join(REPO, "registry/providers.yaml");
const recorded = JSON.parse(readFileSync(join(REPO, PARSED_REGISTRY), "utf8")) as {
  sha256: string;
  routes: unknown;
};

describe("the built-in registry recorded when medbench is built", () => {
  it("holds the routes parsing the YAML gives, value for value", () => {
    const bytes = readFileSync(file);
    expect(recorded.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(recorded.routes).toStrictEqual(checkedRoutes(bytes, file));
  });

  it("is taken only for the bytes it was recorded from: an edited file is parsed again", () => {
    const bytes = readFileSync(file);
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    const marked = { sha256, routes: { recorded: { base_url: "http://127.0.0.1:9/v1" } } };
    expect(builtInRoutes(bytes, file, marked)).toBe(marked.routes);
    const edited = Buffer.concat([bytes, Buffer.from("\n# edited since medbench was built\n")]);
    expect(builtInRoutes(edited, file, marked)).toStrictEqual(checkedRoutes(bytes, file));
    expect(builtInRoutes(bytes, file, null)).toStrictEqual(checkedRoutes(bytes, file));
  });
});

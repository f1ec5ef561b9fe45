// What adding a protocol touched, for Anthropic's: its module (and its error reading), its registration (the
// table of src/model/protocols.ts and the registry schema's enum), the shipped route, its fake server and
// corpus, its tests and test data, and docs. No transport file and no other protocol's file names it, no
// other product code imports it, and no stage of another protocol holds its code in its key.
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { RouteRegistry } from "../../src/model/routes.js";
import { routeIdentity } from "../../stages/model.js";
import { compiled } from "../support/stage-code.js";
import { filesUnder, REPO } from "../support/helpers.js";
import type { Json } from "../../src/util/json.js";

const TOUCHED = {
  module: ["src/model/anthropic.ts", "src/model/anthropic-errors.ts"],
  registration: ["src/model/protocols.ts", "registry/registry.schema.json", "registry/providers.yaml"],
  fake: ["scripts/fake-anthropic.mjs", "scripts/provider-replies/anthropic/"],
  tests: [
    "tests/model/protocol-builds.test.ts",
    "tests/model/anthropic-errors.test.ts",
    "tests/model/anthropic-protocol.test.ts",
    "tests/support/fake-anthropic.ts",
    "tests/model/protocol-files.test.ts",
    "tests/data/anthropic-messages/",
  ],
  docs: ["docs/model-requests.md", "docs/architecture.md", "CHANGELOG.md"],
};
const TRANSPORT = [
  "src/model/client.ts",
  "src/model/http.ts",
  "src/model/pacer.ts",
  "src/model/replicas.ts",
];
const OTHER_PROTOCOL = ["src/model/openai.ts", "src/model/reply.ts", "src/model/refusal.ts"];

const sources = (folder: string) =>
  filesUnder(join(REPO, folder))
    .filter((file) => /\.(ts|mjs|js)$/.test(file))
    .map((file) => relative(REPO, file));

describe("the files Anthropic's protocol touches", () => {
  it("are all there", () => {
    for (const file of Object.values(TOUCHED).flat()) expect(existsSync(join(REPO, file)), file).toBe(true);
  });

  it("are the only product code that loads it: no transport file, no other protocol's file names it", () => {
    const loading = [...sources("src"), ...sources("stages"), ...sources("tasks")].filter((file) =>
      /["'`]\.{1,2}\/(?:[\w./-]*\/)?anthropic(?:-errors)?\.js["'`]/.test(
        readFileSync(join(REPO, file), "utf8"),
      ),
    );
    expect(loading.sort()).toEqual(["src/model/anthropic.ts", "src/model/protocols.ts"]);
    for (const file of [...TRANSPORT, ...OTHER_PROTOCOL])
      expect(readFileSync(join(REPO, file), "utf8").toLowerCase()).not.toContain("anthropic");
  });

  it("are in the key of its routes' stages alone", () => {
    const { stageCode, kinds, task } = compiled("voice-command");
    const own = stageCode(
      REPO,
      kinds.get("model")!,
      { model: "anthropic/claude-x" },
      { name: "", module: task },
    );
    const ofProtocol = (file: string) => /model\/anthropic(-errors)?\.js$/.test(file);
    expect(Object.keys(own.code).filter(ofProtocol)).toEqual([]);
    const identity = (model: string) => {
      const id = routeIdentity({ options: { routes: new RouteRegistry([]) } } as never, model) as {
        protocol: { name: string; code: Record<string, Json> };
      };
      return { name: id.protocol.name, files: Object.keys(id.protocol.code) };
    };
    const openai = identity("openai/gpt-4o");
    expect(openai.name).toBe("openai");
    expect(openai.files.filter(ofProtocol)).toEqual([]);
    const anthropic = identity("anthropic/claude-sonnet-4-5");
    expect(anthropic.name).toBe("anthropic");
    expect(anthropic.files).toEqual(
      expect.arrayContaining(["dist/src/model/anthropic.js", "dist/src/model/anthropic-errors.js"]),
    );
    expect(anthropic.files.filter((file) => /model\/(openai|client|http)\.js$/.test(file))).toEqual([]);
  });
});

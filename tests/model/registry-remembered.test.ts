// A --registry file's routes are checked once and remembered in the code memo by the file's stat signature
// (src/model/registry.ts rememberedRoutes): a keyed rebuild parses no YAML for it. A file that may hold a
// key (a header, a URL's query) is parsed each time, and the key reaches no file of the cache.
import { describe, expect, it } from "vitest";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { filesUnder, REPO } from "../support/helpers.js";
import { projectAgainstFake } from "../support/fake-build.js";

const cleaned = cleanedAfterEach();
const KEY = "hk-PLANTED-9f8e7d6c5b4a";
const YAML = "dist/vendor/yaml.cjs";

const routes = (url: string, extra = "") => `routes:
  fake:
    base_url: ${url}
    concurrency: 4
    ${extra}
    request:
      thinking_off: { chat_template_kwargs: { enable_thinking: false } }
`;

/** Waits until the file's last change is more than 2 s old: the memo trusts no younger stat
 *  (src/util/stat-signature.ts settled). Waiting longer under load changes nothing. */
async function settled(file: string): Promise<void> {
  const changed = () => Math.max(statSync(file).mtimeMs, statSync(file).ctimeMs);
  while (Date.now() - changed() <= 2100) await sleep(200);
}

/** The modules a keyed rebuild (`--rekey`) loads. */
async function loadedByRekey(p: Project): Promise<string[]> {
  const r = await p.run(Project.fakeBuildArgs(["--rekey"]), {
    NODE_OPTIONS: `--require ${join(REPO, "tests/support/loaded-modules.cjs")}`,
  });
  expect(r.exitCode, r.stderr).toBe(0);
  return (r.stderr.split("--- loaded modules\n")[1]?.split("--- loaded builtins\n")[0] ?? "").split("\n");
}

describe("a --registry file's routes", () => {
  it("are remembered once checked: a keyed rebuild loads no YAML parser", async () => {
    const { p } = await projectAgainstFake(cleaned, {}, (url) => routes(url));
    await settled(p.path("routes.yaml"));
    expect((await p.buildAgainstFake()).exitCode).toBe(0);
    expect((await loadedByRekey(p)).filter((file) => file.endsWith(YAML))).toEqual([]);
    // an edit is seen: the file is parsed and checked again
    p.write("routes.yaml", p.read("routes.yaml").replace("concurrency: 4", "concurrency: five"));
    const r = await p.run(Project.fakeBuildArgs(["--rekey"]));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/routes\.yaml:\d+:\d+/);
  });

  it("with a header are parsed each time, and the header's value reaches no file", async () => {
    const { p } = await projectAgainstFake(cleaned, {}, (url) =>
      routes(url, `headers: { Authorization: "Bearer ${KEY}" }`),
    );
    await settled(p.path("routes.yaml"));
    expect((await p.buildAgainstFake()).exitCode).toBe(0);
    expect((await loadedByRekey(p)).filter((file) => file.endsWith(YAML))).toHaveLength(1);
    const holding = filesUnder(p.dir)
      .filter((file) => file !== p.path("routes.yaml"))
      .filter((file) => readFileSync(file).toString("latin1").includes(KEY));
    expect(holding).toEqual([]);
  });
});

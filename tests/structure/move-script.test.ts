// scripts/structure/move.mjs: files moved with git, every path that names them rewritten, and a second run
// (after other work is merged) changes nothing but the old imports that work brought.
import { describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { execFileSync } from "node:child_process";
import { applyMapping } from "../../scripts/structure/move.mjs";

function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "medbench-move-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const git = (...args: string[]) => execFileSync("git", args, { cwd: root });
  git("init", "-q");
  git("add", "-A");
  git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start");
  return root;
}

const read = (root: string, path: string) => readFileSync(join(root, path), "utf8");

const FILES = {
  "map.json": JSON.stringify({
    moves: { "src/alpha/store.ts": "src/beta/deep/store.ts", "src/gamma/": "src/delta/" },
  }),
  "src/alpha/store.ts": 'import { helper } from "./helper.js";\nexport const store = helper;\n',
  "src/alpha/helper.ts": "export const helper = 1;\n",
  "src/alpha/user.ts": [
    'import { store } from "./store.js";',
    'export { store as again } from "./store.js";',
    'import type { Thing } from "../gamma/thing.js";',
    'const later = () => import("./store.js");',
    'const example = "./x.js";',
    "",
  ].join("\n"),
  "src/gamma/thing.ts": 'import { store } from "../alpha/store.js";\nexport type Thing = typeof store;\n',
  "tests/store.test.ts": [
    'vi.mock("../src/alpha/store.js");',
    'const compiled = join(REPO, "dist/src/alpha/store.js");',
    "// src/gamma/thing.ts holds the type",
    'const built = join(REPO, "dist/src/alpha", "store.js");',
    'const pieces = join(REPO, "dist", "src", "alpha", "store.js");',
    "",
  ].join("\n"),
};

describe("move.mjs", () => {
  it("moves files and folders and rewrites what names them", () => {
    const root = project(FILES);
    const said: string[] = [];
    applyMapping(join(root, "map.json"), root, (line) => said.push(line));
    expect(existsSync(join(root, "src/alpha/store.ts"))).toBe(false);
    expect(read(root, "src/beta/deep/store.ts")).toContain('from "../../alpha/helper.js"');
    expect(read(root, "src/delta/thing.ts")).toContain('from "../beta/deep/store.js"');
    expect(read(root, "src/alpha/user.ts")).toBe(
      [
        'import { store } from "../beta/deep/store.js";',
        'export { store as again } from "../beta/deep/store.js";',
        'import type { Thing } from "../delta/thing.js";',
        'const later = () => import("../beta/deep/store.js");',
        'const example = "./x.js";',
        "",
      ].join("\n"),
    );
    const test = read(root, "tests/store.test.ts");
    expect(test).toContain('vi.mock("../src/beta/deep/store.js")');
    expect(test).toContain('"dist/src/beta/deep/store.js"');
    expect(test).toContain("// src/delta/thing.ts holds");
    expect(test).toContain('join(REPO, "dist", "src", "beta", "deep", "store.js")');
    expect(said.some((line) => line.includes('"dist/src/alpha", "store.js"'))).toBe(true);
    const status = execFileSync("git", ["status", "--short"], { cwd: root, encoding: "utf8" });
    expect(status).toMatch(/^R. src\/alpha\/store.ts -> src\/beta\/deep\/store.ts$/m);
  });

  it("a second run changes nothing but the old imports of files added since", () => {
    const root = project(FILES);
    applyMapping(join(root, "map.json"), root, () => {});
    const before = read(root, "src/alpha/user.ts");
    writeFileSync(join(root, "src/alpha/added.ts"), 'import { store } from "./store.js";\n');
    applyMapping(join(root, "map.json"), root, () => {});
    expect(read(root, "src/alpha/user.ts")).toBe(before);
    expect(read(root, "src/alpha/added.ts")).toBe('import { store } from "../beta/deep/store.js";\n');
    expect(existsSync(join(root, "src/gamma"))).toBe(false);
  });
});

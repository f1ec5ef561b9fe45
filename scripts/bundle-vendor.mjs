#!/usr/bin/env node
// The beta quantile (@stdlib/stats-base-dists-beta-quantile, Apache-2.0, its licence notices kept) as one
// file, dist/vendor/beta-quantile.cjs, which src/stats/intervals.ts requires: the package is about 410
// modules of @stdlib, and Node spent 97 ms of CPU and 15 MB loading them one by one; the same code as one
// file loads in 22 ms and 6 MB (docs/performance.md, "The beta quantile"). Rolldown (Vite's bundler) only
// joins the modules: each keeps its code, so each quantile is the package's to the bit
// (tests/stats/beta-quantile-bundle.test.ts).
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { rolldown } from "rolldown";

const root = resolve(import.meta.dirname, "..");
const require = createRequire(join(root, "package.json"));
/** The modules `input` loads joined into one CommonJS file `out` under `banner`; its text, each module named
 *  by its path from node_modules/ on. Rolldown names each module by its path from here; a node_modules
 *  reached through a symlink or hoisted to a parent folder would put that layout into the file, and so into
 *  the key of every stage whose code loads it. */
async function joinedFile(input, out, banner, plugins = []) {
  const bundle = await rolldown({ input, platform: "node", logLevel: "warn", cwd: root, plugins });
  await bundle.write({
    file: out,
    format: "cjs",
    minify: false,
    // JSDoc goes (its examples name the @stdlib packages, which medbench's code scan would take for loads).
    comments: { legal: true, annotation: true, jsdoc: false },
    banner,
  });
  await bundle.close();
  return readFileSync(out, "utf8").replace(/^\/\/ [^\n]*?(node_modules\/)/gm, "// $1");
}

// gammaincinv's two solvers log a warning through `debug`, which writes only under DEBUG=gammaincinv:…; its
// load takes tty and reads the environment and stderr: 3.5 ms of CPU of the file's 14 (node -e, 15 runs,
// load 6; docs/performance.md, "The beta quantile as one file"). The file takes a logger that writes
// nothing; every quantile is the same (tests/stats/beta-quantile-bundle.test.ts).
const SILENT_DEBUG = "\0silent-debug";
const silentDebug = {
  name: "silent-debug",
  resolveId: (id) => (id === "debug" ? SILENT_DEBUG : null),
  load: (id) => (id === SILENT_DEBUG ? "module.exports = () => () => {};\n" : null),
};

const NAME = "@stdlib/stats-base-dists-beta-quantile";
const version = require(require.resolve(`${NAME}/package.json`)).version;
const out = join(root, "dist/vendor/beta-quantile.cjs");
const joined = await joinedFile(
  require.resolve(NAME),
  out,
  `// ${NAME}@${version} and the @stdlib packages it loads (their licence notices below),\n` +
    "// joined into one file by scripts/bundle-vendor.mjs (its `debug` a logger that writes nothing).",
  [silentDebug],
);
// Each module came with its own copy of its licence notice: 411 copies of 46 notices, 245 KB of 568. Node
// holds a module's text for as long as the process runs and parses all of it as it loads, so the copies
// cost a build 1.3 MB of peak memory (docs/performance.md, "Peak memory of a first build"). Each notice is
// kept once, all of them after the banner.
const NOTICE = /^\/\*\*\n\* @license[\s\S]*?\*\/\n/gm;
const notices = [...new Set(joined.match(NOTICE))];
const [banner, code] = [joined.slice(0, joined.indexOf("'use strict';")), joined.replace(NOTICE, "")];
writeFileSync(
  out,
  `${banner}// The licence notices of the modules below, each once:\n${notices.join("")}\n` +
    code.slice(banner.length),
);

// yaml (ISC), which reads specs and route registries, as one file too, dist/vendor/yaml.cjs
// (src/specfile/document.ts): its 74 modules took 26 ms of CPU to load one by one, the file takes 9, on
// every build that parses a document (a first build, a rebuild with a --registry file).
const yamlManifest = require.resolve("yaml/package.json");
const yamlOut = join(root, "dist/vendor/yaml.cjs");
// Its licence asks for the notice in every copy.
const licence = readFileSync(join(dirname(yamlManifest), "LICENSE"), "utf8").trim();
const yamlText = await joinedFile(
  require.resolve("yaml"),
  yamlOut,
  `// yaml@${require(yamlManifest).version}, ` +
    "joined into one file by scripts/bundle-vendor.mjs. Its licence:\n" +
    licence.replace(/^/gm, "// "),
);
writeFileSync(yamlOut, yamlText);

#!/usr/bin/env node
// dist/ is compiled to CommonJS (tsconfig.json): this marks it so for Node, inside a package whose own files
// (bin/, scripts/) are ES modules. CommonJS because Node 20 loads a CommonJS module in a fifth of the time
// an ES module takes (scripts/bench/module-format.mjs: 0.11 against 0.54 ms a module beyond node -e 0, 66
// chained modules), and a build that keys its stages loads about 66 (scripts/bench/noop-build.mjs, the
// --rekey line).
import { mkdirSync, writeFileSync } from "node:fs";

mkdirSync("dist", { recursive: true });
writeFileSync("dist/package.json", JSON.stringify({ type: "commonjs" }) + "\n");

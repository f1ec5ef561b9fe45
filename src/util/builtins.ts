// The Node builtins medbench's start-up needs, required rather than imported. An ES import of a builtin
// builds its ES module facade, which reads every export (for fs, the lazy `promises` and `ReadStream` getters
// too). The gain is small: scripts/bench/builtins.mjs, whole processes against `node -e 0`, gave 1.07 ES
// imported against 1.03 required, then 1.20 against 1.17 (2026-12-03, shared 2-core machine): about 0.03-0.04
// of Node's start-up on every command. Import fs, crypto, url and util functions from here
// (tests/startup-imports.test.ts keeps it so). crypto is loaded on first use: a command that hashes nothing
// (`--help`, a no-op build answered from its record) never pays for it.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const fs = require("node:fs") as typeof import("node:fs");
let cryptoModule: typeof import("node:crypto") | undefined;
const crypto = () => (cryptoModule ??= require("node:crypto") as typeof import("node:crypto"));
const url = require("node:url") as typeof import("node:url");
const util = require("node:util") as typeof import("node:util");

export const {
  accessSync,
  closeSync,
  constants,
  createReadStream,
  createWriteStream,
  existsSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} = fs;
export const createHash = (algorithm: string) => crypto().createHash(algorithm);
export const randomBytes = (size: number): Buffer => crypto().randomBytes(size);
export const { fileURLToPath, pathToFileURL } = url;
export const { parseArgs } = util;

// The Node builtins medbench's start-up needs, required rather than imported. An ES import of a builtin
// builds its ES module facade, which reads every export: for fs that runs the lazy `promises` and
// `ReadStream` getters (loading fs/promises and the stream modules), and url, util and crypto cost several
// times their require too. Required, the four cost about 5 ms less on every command, some 7 % of Node's own
// start-up (scripts/bench/noop-build.mjs). Import fs, crypto, url and util functions from here.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const fs = require("node:fs") as typeof import("node:fs");
const crypto = require("node:crypto") as typeof import("node:crypto");
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
export const { createHash, randomBytes } = crypto;
export const { fileURLToPath, pathToFileURL } = url;
export const { parseArgs } = util;

// The Node builtins medbench's start-up needs, in one place. crypto is loaded on first use: a command that
// hashes nothing (`--help`, a no-op build answered from its record) never pays for it. Written when dist/
// was ES modules, where an ES import of a builtin builds its facade (for fs, the `promises` and `ReadStream`
// getters too): about 0.03 of Node's start-up (scripts/bench/builtins.mjs). dist/ is CommonJS now
// (scripts/dist-commonjs.mjs), where every import is a require; the rule stays so that the code does not
// depend on which (tests/structure/startup-imports.test.ts keeps it).
const fs = require("node:fs") as typeof import("node:fs");
let cryptoModule: typeof import("node:crypto") | undefined;
const crypto = () => (cryptoModule ??= require("node:crypto") as typeof import("node:crypto"));
const url = require("node:url") as typeof import("node:url");
const util = require("node:util") as typeof import("node:util");

export const {
  accessSync,
  closeSync,
  cpSync,
  constants,
  copyFileSync,
  createReadStream,
  createWriteStream,
  existsSync,
  fstatSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  rmdirSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} = fs;
export const createHash = (algorithm: string) => crypto().createHash(algorithm);
/** sha256 of bytes held whole, as hex, in one call: no Hash object (crypto.hash, Node 20.12), which a small
 *  input's hash cost about half as much again to make. */
export const sha256Once = (data: string | Uint8Array): string => crypto().hash("sha256", data, "hex");
export const randomBytes = (size: number): Buffer => crypto().randomBytes(size);
export const { fileURLToPath, pathToFileURL } = url;
export const { parseArgs } = util;

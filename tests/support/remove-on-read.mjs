// A preload (`node --import tests/support/remove-on-read.mjs`) that removes the path $REMOVE when the
// process first reads a file whose path ends in $REMOVE_ON_READ: a user's `rm` at a chosen moment of a
// build, without timing. The no-op record's test removes the spec once the build has read it.
import fs from "node:fs";
import { rmSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const original = fs.readFileSync;
let removed = false;
fs.readFileSync = function (p, ...rest) {
  if (!removed && typeof p === "string" && p.endsWith(process.env.REMOVE_ON_READ)) {
    removed = true;
    rmSync(process.env.REMOVE, { recursive: true, force: true });
  }
  return original.call(this, p, ...rest);
};
syncBuiltinESMExports();

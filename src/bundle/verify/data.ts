// The data check: with --data-dir, the user's copy of the release against the pins the bundle records.
import { existsSync, readFileSync } from "../../util/builtins.js";
import { resolve } from "node:path";
import { sha256Hex } from "../../hash/sha256.js";
import { isData, type BundleManifest } from "../layout.js";
import type { Check } from "./types.js";

export function checkData(manifest: BundleManifest, dataDir: string | undefined): Check {
  const check: Check = { name: "data", ok: null, lines: [] };
  const download = Object.entries(manifest.stages).find(([, stage]) => isData(stage.kind));
  if (!dataDir) {
    check.lines.push(
      "not checked: the replay needs no data (pass --data-dir to check a release against the pins)",
    );
    return check;
  }
  if (!download) return check;
  const pins = download[1].outputs;
  check.ok = true;
  for (const [file, pin] of Object.entries(pins)) {
    const path = resolve(dataDir, file);
    const actual = existsSync(path) ? sha256Hex(readFileSync(path)) : null;
    if (actual === pin) continue;
    check.ok = false;
    const found = actual ? `sha256 ${actual.slice(0, 16)}…, pinned ${pin.slice(0, 16)}…` : "missing";
    check.lines.push(`${file}: ${found}`);
  }
  if (check.ok) check.lines.push(`${Object.keys(pins).length} files of ${dataDir} match the pins`);
  return check;
}

// The local spec check: when this project has a spec of the same task, whether it differs from the bundled
// one (the field diff), and whether it is another published spec of the same version.
import { existsSync, readFileSync, readdirSync } from "../../util/builtins.js";
import { join } from "node:path";
import { parseSourceDoc } from "../../specfile/document.js";
import { jsonDiff, type Json } from "../../util/json.js";
import type { BundleManifest } from "../layout.js";
import type { Check } from "./types.js";

const field = (value: Json, key: string) => (value as Record<string, Json> | null)?.[key];

/** The first of the project's spec files (in name order) of the bundle's task (by slug), parsed. */
function sameTaskSpec(root: string, slug: string): { file: string; value: Json } | null {
  const specs = join(root, "specs");
  for (const file of readdirSync(specs)
    .filter((name) => /\.ya?ml$/.test(name))
    .sort()) {
    let value: Json;
    try {
      value = parseSourceDoc(readFileSync(join(specs, file)), `specs/${file}`).value as Json;
    } catch {
      continue;
    }
    if ((value as { slug?: string } | null)?.slug === slug) return { file, value };
  }
  return null;
}

export function checkLocalSpec(root: string, dir: string, manifest: BundleManifest): Check | null {
  if (!existsSync(join(root, "specs"))) return null;
  const bundled = parseSourceDoc(readFileSync(join(dir, "spec", manifest.spec)), manifest.spec)
    .value as Json;
  const local = sameTaskSpec(root, manifest.slug);
  if (!local) return null;
  const { file, value } = local;
  const diffs = jsonDiff(bundled, value);
  // One version of a task has one published spec: the same version with another `spec` member means one of
  // the two is not the published one (a bundle whose spec was edited, its hashes rewritten to match).
  const sameVersion = field(bundled, "version") === field(value, "version");
  const published = sameVersion && jsonDiff(field(bundled, "spec"), field(value, "spec")).length > 0;
  if (diffs.length === 0)
    return { name: "local spec", ok: true, lines: [`specs/${file} is the same as the bundled spec`] };
  return {
    name: "local spec",
    ok: published ? false : null,
    lines: [
      published
        ? `specs/${file} has another published spec (member \`spec\`) for the same version ` +
          `${String(field(value, "version"))}: the bundled spec is not the one this project has`
        : `specs/${file} differs from the bundled spec (information; the bundled one is verified):`,
      ...diffs.map((diff) => `  ${diff.path}: ${JSON.stringify(diff.from)} -> ${JSON.stringify(diff.to)}`),
    ],
  };
}

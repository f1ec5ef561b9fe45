// The spec check: the bundled spec loads with the bundle's variables and hashes to the recorded spec_hash
// (the one bundle.json and the published metrics.json record).
import { readFileSync } from "../../util/builtins.js";
import { join } from "node:path";
import { parseSourceDoc } from "../../specfile/document.js";
import { loadSpecFromSource, resultSource, type SpecFile } from "../../specfile/load.js";
import type { Json } from "../../util/json.js";
import type { BundleManifest } from "../layout.js";
import { specFiles } from "../members.js";
import { BundleRefused, checkSpecFiles } from "../limits.js";
import type { Check, Outputs } from "./types.js";
import { DiagnosticError } from "../../errors.js";

/** The spec_hash the published metrics.json records, if any. */
function metricsSpecHash(manifest: BundleManifest, published: Outputs): string | undefined {
  const at = resultSource(manifest.results["metrics.json"] ?? "").stage;
  const text = published.get(at)?.get("metrics")?.toString("utf8") ?? "{}";
  return (JSON.parse(text) as { spec_hash?: string }).spec_hash;
}

function loadBundledSpec(dir: string, manifest: BundleManifest): SpecFile {
  const source = parseSourceDoc(readFileSync(join(dir, "spec", manifest.spec)), manifest.spec);
  const variables = Object.fromEntries(
    Object.entries(manifest.variables).filter(([, value]) => value !== undefined),
  ) as Record<string, Json>;
  return loadSpecFromSource(source, variables);
}

/** The bundled spec (null when it does not load) and the check of its hash. */
export function checkSpec(
  label: string,
  dir: string,
  manifest: BundleManifest,
  published: Outputs,
): { spec: SpecFile | null; check: Check } {
  const check: Check = { name: "spec", ok: false, lines: [] };
  // Once loaded, the spec is used even when what follows fails (a published metrics.json that is not JSON).
  let spec: SpecFile | null = null;
  try {
    spec = loadBundledSpec(dir, manifest);
    checkSpecFiles(label, specFiles(spec));
    const metricsHash = metricsSpecHash(manifest, published);
    check.ok =
      spec.specHash === manifest.spec_hash &&
      (metricsHash === undefined || metricsHash === manifest.spec_hash);
    check.lines.push(
      check.ok
        ? `${manifest.spec} hashes to ${manifest.spec_hash}, the recorded spec_hash`
        : `${manifest.spec} hashes to ${spec.specHash}, but the result records spec_hash ` +
            `${metricsHash ?? manifest.spec_hash}: the spec was edited`,
    );
    return { spec, check };
  } catch (e) {
    if (e instanceof BundleRefused) throw e;
    const message =
      e instanceof DiagnosticError
        ? e.diagnostics.map((diagnostic) => diagnostic.message).join("; ")
        : (e as Error).message;
    check.lines.push(`the bundled spec does not load: ${message}`);
    return { spec, check };
  }
}

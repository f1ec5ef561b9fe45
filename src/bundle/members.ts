// What export writes and verify checks alike: the spec's files, the lock entry and the pins a bundle carries
// (derived from its manifest). Verify's members and records checks are in src/bundle/verify/.
import type { SpecFile } from "../specfile/load.js";
import { stableJson } from "../util/json.js";
import { isData, type BundleManifest } from "./layout.js";

/** The project paths of the files the spec's stages read (templates, schemas), sorted. */
export function specFiles(spec: SpecFile): string[] {
  const files = spec.stages.flatMap((decl) =>
    Object.values(decl.inputs).flatMap((ref) => ("file" in ref ? [ref.file] : [])),
  );
  return [...new Set(files)].sort();
}

/** The lock entry a bundle carries, derived from its manifest (lock.json must be exactly this). */
export function lockEntry(manifest: BundleManifest): string {
  return stableJson({
    [manifest.spec]: {
      slug: manifest.slug,
      spec_hash: manifest.spec_hash,
      pins: manifest.pins,
      stages: Object.fromEntries(
        Object.entries(manifest.stages).map(([name, st]) => [
          name,
          { kind: st.kind, key: st.key, outputs: st.outputs },
        ]),
      ),
    },
  });
}

/** The pins a bundle records: the release files each data stage read, under the source it read them from. */
export function bundlePins(stages: BundleManifest["stages"]): BundleManifest["pins"] {
  const pins: BundleManifest["pins"] = {};
  for (const st of Object.values(stages)) {
    if (!isData(st.kind)) continue;
    const source = (st.record.identity as { source?: unknown } | null)?.source;
    if (typeof source === "string") pins[source] = { ...(pins[source] ?? {}), ...st.outputs };
  }
  return pins;
}

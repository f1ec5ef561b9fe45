// A synthetic voice-command project of about N items for benchmarks: the bundled sample's rows repeated with
// new ids, groups and a marker in every utterance that names its copy and its file, so that every request
// body differs from every other (the sample itself has ASR utterances equal to their clean ones; repeating
// it as it is would send ~9 % duplicate bodies, which the model stage sends once and a bare loop twice).
//   import { syntheticProject } from "./release.mjs";
//   const { dir, items } = await syntheticProject(20000, work)
import { fs, path } from "zx";

const repo = path.resolve(import.meta.dirname, "../..");
export const RELEASE_FILES = [
  "commands_v0.1.jsonl",
  "commands_v0.1_asr_generic.jsonl",
  "commands_v0.1_asr_kor_or_stt.jsonl",
  "kor_overheard_v0.1.jsonl",
];

/** Rows of the bundled sample per release file, from the checkout `from`. */
async function sampleRows(from) {
  const sample = path.join(from, "specs/voice-command/sample/benchmark");
  const out = {};
  for (const f of RELEASE_FILES)
    out[f] = (await fs.readFile(path.join(sample, f), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
  return out;
}

/** A project folder under `work` (specs copied, release in `release/`) with at least `target` items; `from`:
 *  the checkout whose specs and sample it copies (another revision's, for scripts/bench/revisions.mjs). */
export async function syntheticProject(target, work, from = repo) {
  const rows = await sampleRows(from);
  const perCopy = RELEASE_FILES.reduce((n, f) => n + rows[f].length, 0);
  const copies = Math.max(1, Math.ceil(target / perCopy));
  const dir = await fs.mkdtemp(path.join(work, "p-"));
  await fs.copy(path.join(from, "specs"), path.join(dir, "specs"));
  const release = path.join(dir, "release");
  await fs.copy(path.join(from, "specs/voice-command/sample"), release);
  for (const [k, f] of RELEASE_FILES.entries()) {
    const out = fs.createWriteStream(path.join(release, "benchmark", f));
    for (let c = 0; c < copies; c++) {
      let chunk = "";
      for (const r of rows[f])
        chunk +=
          JSON.stringify({
            ...r,
            id: `${r.id}-c${c}`,
            group: `${r.group}-c${c}`,
            utterance: `${r.utterance} (${c}.${k})`,
          }) + "\n";
      if (!out.write(chunk)) await new Promise((r) => out.once("drain", r));
    }
    await new Promise((r) => out.end(r));
  }
  return { dir, items: copies * perCopy };
}

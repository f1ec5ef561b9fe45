// A synthetic note-errors project of about N items (notes) for benchmarks: the bundled sample's pairs (test
// and train alike) repeated with new pair ids and a last line in both notes of a pair naming its copy, so
// that every note, request body and conjunction feature row differs from every other. The SOAP lines, header
// code and edit offsets are left as they are (the marker line comes after them). The pairs are written as
// the project's own sample (`synthetic: true` kept, so the page's counts are not checked) and the copied
// spec's sample pins are updated to them: a build of the project needs no --data-dir.
//   import { noteErrorsProject } from "./note-errors-release.mjs";
//   const { dir, items } = await noteErrorsProject(20000, work)
import { createHash } from "node:crypto";
import { fs, path } from "zx";

const repo = path.resolve(import.meta.dirname, "../..");
const SAMPLE = "specs/note-errors/sample";
const FILES = ["pairs_test.jsonl", "pairs_train.jsonl"];

const sha256 = (text) => createHash("sha256").update(text).digest("hex");

/** A project folder under `work` (specs copied, sample replaced) with at least `target` test notes. */
export async function noteErrorsProject(target, work) {
  const dir = await fs.mkdtemp(path.join(work, "ne-"));
  await fs.copy(path.join(repo, "specs"), path.join(dir, "specs"));
  let spec = await fs.readFile(path.join(dir, "specs/note-errors.yaml"), "utf8");
  let items = 0;
  for (const [k, f] of FILES.entries()) {
    const rows = (await fs.readFile(path.join(repo, SAMPLE, f), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const copies = Math.max(1, Math.ceil(target / (2 * rows.length)));
    const lines = [];
    for (let c = 0; c < copies; c++)
      for (const r of rows) {
        const mark = `\nMemo: copy ${c} of file ${k}`;
        lines.push(
          JSON.stringify({
            ...r,
            pair_id: `${r.pair_id}-c${c}`,
            error_note: r.error_note + mark,
            clean_note: r.clean_note + mark,
          }),
        );
      }
    const text = lines.join("\n") + "\n";
    await fs.writeFile(path.join(dir, SAMPLE, f), text);
    if (f === "pairs_test.jsonl") items = 2 * lines.length;
    // The sample's pin of this file (the line after its name under sample.files) becomes the new file's.
    const pin = new RegExp(`(sample:[\\s\\S]*?\\n\\s+${f.replace(".", "\\.")}: )[0-9a-f]{64}`);
    if (!pin.test(spec)) throw new Error(`specs/note-errors.yaml: no sample pin of ${f}`);
    spec = spec.replace(pin, `$1${sha256(text)}`);
  }
  await fs.writeFile(path.join(dir, "specs/note-errors.yaml"), spec);
  return { dir, items };
}

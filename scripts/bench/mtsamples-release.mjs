// A synthetic mtsamples project of about N items for benchmarks: the notes of tests/data/mtsamples_processed
// that give an instance (HELM's extraction, the task's own code in dist/) repeated as new files
// (`<name> - copy <c>.txt`) with a first line naming the copy and the marker on their PLAN line too, so that
// every generation and judge request differs from every other. The copied spec's pins file
// (specs/mtsamples/SHA256SUMS) lists the new files; build with `--data-dir release`.
//   import { mtsamplesProject } from "./mtsamples-release.mjs";
//   const { dir, items } = await mtsamplesProject(20000, work)
import { createHash } from "node:crypto";
import { fs, path } from "zx";

const repo = path.resolve(import.meta.dirname, "../..");
const NOTES = path.join(repo, "tests/data/mtsamples_processed");

const sha256 = (text) => createHash("sha256").update(text).digest("hex");

/** A project folder under `work` (specs copied, notes in `release/`) with at least `target` notes. */
export async function mtsamplesProject(target, work) {
  const { extract } = await import(path.join(repo, "dist/tasks/mtsamples/instances.js"));
  const all = (await fs.readdir(NOTES)).filter((f) => f.endsWith(".txt")).sort();
  const texts = await Promise.all(all.map((f) => fs.readFile(path.join(NOTES, f), "utf8")));
  const kept = all.flatMap((f, i) => (extract(f, texts[i], "helm").ok ? [[f, texts[i]]] : []));
  const names = kept.map(([f]) => f),
    notes = kept.map(([, t]) => t);
  const perCopy = names.length;
  const copies = Math.max(1, Math.ceil(target / perCopy));
  const dir = await fs.mkdtemp(path.join(work, "mt-"));
  await fs.copy(path.join(repo, "specs"), path.join(dir, "specs"));
  const release = path.join(dir, "release");
  await fs.mkdirp(release);
  const sums = [];
  for (let c = 0; c < copies; c++)
    for (const [i, f] of names.entries()) {
      const name = `${f.replace(/\.txt$/, "")} - copy ${c}.txt`;
      const copied = notes[i].replace(/(PLAN:[^\n]*)/, `$1 (copy ${c})`);
      const text = `Copy ${c} of the synthetic release.\n${copied}`;
      await fs.writeFile(path.join(release, name), text);
      sums.push(`${sha256(text)}  ${name}`);
    }
  await fs.writeFile(path.join(dir, "specs/mtsamples/SHA256SUMS"), sums.join("\n") + "\n");
  return { dir, items: copies * perCopy };
}

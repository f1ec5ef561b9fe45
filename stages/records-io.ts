// A stage's records read and written line by line (src/contract/records.ts streamRecords, RecordsWriter):
// an input read from its file in the store, checked against its hash first as cache reads are.
import { rmSync } from "../src/util/builtins.js";
import type { StageContext } from "../src/contract/stage.js";
import { CorruptObjectError } from "../src/runner/store/corrupt.js";
import { streamRecords, type RecordShapes } from "../src/contract/records.js";

/** The records of input `input`'s output of the same name as their type (e.g. replies), one at a time. */
export async function inputRecords<T extends keyof RecordShapes>(
  ctx: StageContext,
  input: string,
  type: T,
): Promise<Generator<RecordShapes[T]>> {
  const view = ctx.inputs[input]!;
  const file = view.path(type);
  // A bundle being verified holds its inputs in memory: no file to stream from.
  if (!file) return streamRecords(type, { data: view.read(type) });
  const expected = view.hashes[type]!;
  // The stat cache knows an object this process wrote or checked: no second hash of the same bytes.
  const actual = await ctx.hashFile(file);
  if (actual !== expected) {
    rmSync(file, { force: true }); // never used again; the producing stage reruns
    throw new CorruptObjectError(expected, actual);
  }
  return streamRecords(type, { file });
}

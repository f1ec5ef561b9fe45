// Types of measure.mjs's exports, for the tests that use them (tests/structure/layers.test.ts,
// tests/structure/shape.test.ts).
export interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
}

export interface MeasuredFunction {
  file: string;
  line: number;
  name: string;
  lines: number;
  params: number;
}

export interface Measured {
  files: number;
  lines: number;
  functions: MeasuredFunction[];
  names: { file: string; line: number; name: string }[];
  edges: ImportEdge[];
}

/** floors.json: folder -> floor, room -> level, counted from the bottom. */
export interface Structure {
  floors: Map<string, number>;
  rooms: Map<string, number>;
}

export interface SingleCaller {
  single: number;
  called: number;
  uncalled: number;
  percent: number;
}

/** The counters; each list names its items (`file:line name (…)`, or `from -> to`, or a cycle's members). */
export interface Facts {
  files: number;
  lines: number;
  functions: number;
  importsUpFloor: string[];
  folderCycles: string[][];
  valueFolderCycles: string[][];
  roomCycles: string[][];
  importsUpRoom: string[];
  functionsOverFiveParameters: string[];
  functionsOver100: string[];
  functionsOver60: string[];
  names: number;
  singleLetter: number;
  singleLetterPercent: number;
  singleLetterOutsideKept: string[];
  singleLetterOutsideKeptPercent: number;
  singleCaller: SingleCaller | null;
  buildCommandLines: number | null;
  /** Lines of COLUMN_LIMIT columns or more, in tests and scripts too: `file:line (N columns)`. */
  longLines: string[];
}

type GroupOf = (path: string) => string | null;

export const MAX_PARAMETERS: number;
export const COLUMN_LIMIT: number;
export function productFiles(repo?: string): string[];
export function longLines(repo?: string): string[];
export function folderOf(path: string): string;
export function roomOf(path: string): string | null;
export function readStructure(repo?: string): Structure;
export function measure(repo?: string): Measured;
export function folderCycles(edges: ImportEdge[]): string[][];
export function roomCycles(edges: ImportEdge[]): string[][];
export function upward(edges: ImportEdge[], groupOf: GroupOf, levels: Map<string, number>): string[];
export function unplaced(edges: ImportEdge[], groupOf: GroupOf, levels: Map<string, number>): string[];
export function summary(
  result: Measured,
  structure?: Structure,
  callerShare?: SingleCaller | null,
  repo?: string,
): Facts;
export function report(facts: Facts): string[];

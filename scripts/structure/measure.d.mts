// Types of measure.mjs's exports, for the tests that use them (tests/layers.test.ts).
export interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
}

export interface Measured {
  files: number;
  lines: number;
  functions: { file: string; name: string; lines: number }[];
  names: { file: string; name: string }[];
  edges: ImportEdge[];
}

export function folderOf(path: string): string;
export function measure(repo?: string): Measured;
export function folderCycles(edges: ImportEdge[]): string[][];

// Types of move.mjs's exports, for its test (tests/structure/move-script.test.ts).
export function applyMapping(mappingFile: string, repo?: string, say?: (line: string) => void): void;

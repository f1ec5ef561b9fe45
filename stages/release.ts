// A download stage's outputs seen as release files (path -> content), for the stages that read them.
import type { InputView } from "../src/contract/stage.js";
import type { ReleaseFiles } from "../tasks/task.js";

export function releaseFiles(input: InputView | undefined): ReleaseFiles {
  const known = (path: string) => {
    if (!input || !(path in input.hashes)) throw new Error(`the release has no file ${path}`);
    return input;
  };
  return {
    has: (path) => input !== undefined && path in input.hashes,
    list: () => (input ? Object.keys(input.hashes).sort() : []),
    text: (path) => known(path).text(path),
    bytes: (path) => known(path).read(path),
    path: (path) => known(path).path(path),
  };
}

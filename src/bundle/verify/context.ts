// The context a replayed stage runs in: bundled inputs, no pins, no temp files, live replies kept apart.
import type { Cache } from "../../runner/store/cache.js";
import { tempName } from "../../util/fsutil.js";
import { memoStore } from "../../runner/replies/memo.js";
import type { InputView, StageContext } from "../../contract/stage.js";
import type { StageDecl } from "../../specfile/load.js";
import type { Json } from "../../util/json.js";
import type { Replay } from "./types.js";
import { commandRoutes } from "../../model/routes.js";

export function replayContext(
  decl: StageDecl,
  replay: Pick<Replay, "spec" | "task" | "manifest" | "options">,
  inputs: Record<string, InputView>,
  cache: Cache,
  live: boolean,
): StageContext {
  const { spec, task, manifest, options } = replay;
  return {
    stage: decl.name,
    params: decl.params as Json,
    inputs,
    task,
    build: {
      slug: spec.slug,
      version: spec.version,
      specHash: spec.specHash,
      medbench: manifest.medbench,
      recipe: manifest.stages[decl.name]?.record.recipe ?? 1,
      variables: spec.variables,
    },
    options: {
      projectRoot: options.project.root,
      trustChanged: false,
      refresh: false,
      env: options.env,
      routes: commandRoutes(options.registryFiles),
      replyNamespace: "live",
    },
    pins: { recorded: () => undefined, record: () => {} },
    memo: memoStore(cache),
    // A stage that writes its output as it goes (a RecordsWriter) writes it here; it is read back at once.
    tempPath: () => tempName(options.scratch ?? cache.tmp),
    hashFile: async () => {
      throw new Error("replayed stages hash no files");
    },
    emit: live && options.emit ? options.emit : () => {},
  };
}

// The runtime a build runs: the spec loaded with the command's model routes, every `--refresh` checked
// against its stages.
import type { Json } from "../util/json.js";
import { UsageError } from "../errors.js";
import type { BuildOptions, Runtime } from "../runner/execution/executor.js";
import { commandRoutes } from "../model/routes.js";
import { loadRuntime } from "./runtime.js";

/** The spec's runtime, with every `--refresh` naming one of its stages or kinds; `say` tells of
 *  downloads. */
export async function loadBuildRuntime(
  specPath: string,
  vars: Record<string, Json>,
  opts: BuildOptions,
  say: (message: string) => void,
): Promise<Runtime> {
  const routes = commandRoutes(opts.registryFiles);
  const rt = await loadRuntime(specPath, vars, opts.project.cacheDir, { routes }, say);
  const known = rt.plan.order.flatMap((decl) => [decl.name, decl.kind]);
  for (const name of opts.refresh)
    if (!known.includes(name))
      throw new UsageError(
        `--refresh ${name}: the spec has no stage or stage kind of that name; ` +
          `its stages: ${rt.plan.order.map((decl) => decl.name).join(", ")}`,
      );
  return rt;
}

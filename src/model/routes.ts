// The model routes of one command, as a value: registry/providers.yaml and the --registry files given, read
// and checked once, on first use (a build of a built-in baseline reads no registry unless one is given).
import type { Json } from "../util/json.js";
import { loadRoutes, type Route } from "./registry.js";

export interface Routes {
  /** The --registry files given (later files override earlier routes and the shipped ones). */
  readonly given: readonly string[];
  /** Every file the routes come from, as messages name them: the shipped registry first. */
  readonly files: readonly string[];
  get(name: string): Route | undefined;
  has(name: string): boolean;
  list(): Route[];
  names(): string[];
  /** Reads and checks the files now, whether a route is used or not (a given --registry must be valid). */
  check(): void;
}

/** Routes read from the shipped registry and `given`, the first time one is asked for. */
export class RouteRegistry implements Routes {
  #routes: Map<string, Route> | null = null;
  readonly given: readonly string[];

  constructor(given: readonly string[]) {
    this.given = [...given];
  }

  get files(): readonly string[] {
    return ["registry/providers.yaml", ...this.given];
  }

  /** A file that fails to load is read again (and fails again) at the next ask, as every reader did. */
  #loaded(): Map<string, Route> {
    return (this.#routes ??= loadRoutes([...this.given]));
  }

  get(name: string): Route | undefined {
    return this.#loaded().get(name);
  }

  has(name: string): boolean {
    return this.#loaded().has(name);
  }

  list(): Route[] {
    return [...this.#loaded().values()];
  }

  names(): string[] {
    return [...this.#loaded().keys()];
  }

  check(): void {
    this.#loaded();
  }
}

const ofCommands = new WeakMap<readonly string[], Routes>();

/**
 * The routes of a command whose --registry option holds `given`: one value for that option, so that the spec
 * check and every stage of the command share one reading of the files. Made where a command needs routes,
 * not where it reads its options: a no-op build answered from its record loads no registry code.
 */
export function commandRoutes(given: readonly string[]): Routes {
  let routes = ofCommands.get(given);
  if (!routes) ofCommands.set(given, (routes = new RouteRegistry(given)));
  return routes;
}

/**
 * The route's fields shape every body sent, so they are part of a model stage's key
 * (the key's variable name, never its value).
 */
export function routeKeyFields(route: Route): Json {
  return {
    base_url: route.base_url,
    api_key_env: route.api_key_env ?? null,
    header_names: Object.keys(route.headers ?? {}).sort(),
    request: route.request as Json,
  };
}

// The routes medbench ships and shows, parsed as a user's build reads them: registry/providers.yaml, the
// example registry (examples/routes.yaml) and the init template's routes (uncommented as a user would).
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { REPO } from "./helpers.js";
import { ROUTES_TEMPLATE } from "../../src/cli/project-template.js";

export type Routes = Record<string, Record<string, unknown>>;

const routesOf = (text: string): Routes => (parseYaml(text) as { routes: Routes }).routes;

export const shippedRoutes = (): Routes => routesOf(readFileSync(`${REPO}/registry/providers.yaml`, "utf8"));

export const exampleRoutes = (): Routes => routesOf(readFileSync(`${REPO}/examples/routes.yaml`, "utf8"));

/** The init template's routes, uncommented: route lines (`  # name:`) and their indented fields. */
export const templateRoutes = (): Routes =>
  routesOf(
    ROUTES_TEMPLATE.split("\n")
      .map((l) => (/^ {2}# (?:[a-z][a-z0-9_-]*:| {2})/.test(l) ? `  ${l.slice(4)}` : l))
      .join("\n"),
  );

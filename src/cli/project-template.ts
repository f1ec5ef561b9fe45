// What `medbench init` writes into a benchmark author's repository (src/cli/commands/init.ts). The longer
// files' text is in src/cli/templates/project/, read at run time from the install root.
import { filledTemplate } from "./template-files.js";

/** The lines .gitignore needs: what a build writes and can write again. */
export const GITIGNORE = [
  "# medbench: the local cache and built results; the installed packages",
  "cache/",
  "results/",
  "node_modules/",
];

/** A route registry whose routes are all commented out: nothing is sent until one is uncommented. */
export const ROUTES_TEMPLATE = filledTemplate("project/routes.yaml.template");

export const PROJECT_README = filledTemplate("project/README.md.template");

// The text of the files new-task and init write, kept as files in src/cli/templates/ and read at run time
// from the install root (the package ships src/), so that they read as what they are.
import { resolve } from "node:path";
import { readFileSync } from "../util/builtins.js";
import { installRoot } from "../util/paths.js";

/** A template of src/cli/templates/ with each `{{field}}` of `fields` filled in. */
export function filledTemplate(file: string, fields: Record<string, string> = {}): string {
  const text = readFileSync(resolve(installRoot(), "src/cli/templates", file), "utf8");
  return text.replace(/\{\{(\w+)\}\}/g, (placeholder, field: string) =>
    Object.hasOwn(fields, field) ? fields[field]! : placeholder,
  );
}

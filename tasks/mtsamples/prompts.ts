// Generation requests: MedARC's system prompt (or its use_think variant) and the note as the user turn.
import type { PromptsInput, TaskRequest } from "../task.js";
import { extract, type Variant } from "./instances.js";

interface Params {
  variant?: Variant;
  use_think?: boolean;
}

export function buildRequests({ release, templates, params }: PromptsInput): TaskRequest[] {
  const settings = params as Params;
  const variant = settings.variant ?? "helm";
  const system = (settings.use_think ? templates.system_think : templates.system)?.trim();
  if (!system)
    throw new Error(
      `the prompts stage needs a \`${settings.use_think ? "system_think" : "system"}\` template input`,
    );
  const files = release
    .list()
    .filter((name) => name.endsWith(".txt"))
    .sort();
  const requests: TaskRequest[] = [];
  for (const file of files) {
    const extracted = extract(file, release.text(file), variant);
    if (!extracted.ok) continue; // skipped as HELM skips it; the count is reported by the scorer
    requests.push({
      id: `all/${file.replace(/\.txt$/, "")}`,
      messages: [
        { role: "system", content: system },
        { role: "user", content: extracted.instance.input },
      ],
      meta: {
        subset: "all",
        file,
        reference: extracted.instance.reference,
        source: extracted.instance.source,
        input: extracted.instance.input,
        files_read: files.length,
      },
    });
  }
  return requests;
}

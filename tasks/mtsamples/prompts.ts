// Generation requests: MedARC's system prompt (or its use_think variant) and the note as the user turn.
import type { PromptsInput, TaskRequest } from "../task.js";
import { extract, type Variant } from "./instances.js";

interface Params {
  variant?: Variant;
  use_think?: boolean;
}

export function buildRequests({ release, templates, params }: PromptsInput): TaskRequest[] {
  const p = params as Params;
  const variant = p.variant ?? "helm";
  const system = (p.use_think ? templates.system_think : templates.system)?.trim();
  if (!system)
    throw new Error(
      `the prompts stage needs a \`${p.use_think ? "system_think" : "system"}\` template input`,
    );
  const files = release
    .list()
    .filter((f) => f.endsWith(".txt"))
    .sort();
  const requests: TaskRequest[] = [];
  for (const file of files) {
    const x = extract(file, release.text(file), variant);
    if (!x.ok) continue; // skipped as HELM skips it; the count is reported by the scorer
    requests.push({
      id: `all/${file.replace(/\.txt$/, "")}`,
      messages: [
        { role: "system", content: system },
        { role: "user", content: x.instance.input },
      ],
      meta: {
        subset: "all",
        file,
        reference: x.instance.reference,
        source: x.instance.source,
        input: x.instance.input,
        files_read: files.length,
      },
    });
  }
  return requests;
}

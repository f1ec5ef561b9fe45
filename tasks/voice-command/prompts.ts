// System prompt per scene and user turn per item, from the release files and the pinned templates.
import type { PromptsInput, TaskRequest } from "../task.js";
import type { Json } from "../../src/util/json.js";
import { RULES_FILE, SCENES_FILE, SUBSETS, type Item, type Scene, type Subset } from "./release.js";

export function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? values[name]! : whole));
}

export function systemPrompt(scene: Scene, rules: string, templates: Record<string, string>): string {
  return fill(templates.system!, {
    procedure: scene.procedure,
    phase: scene.phase,
    actions: scene.actions.join(", "),
    targets: scene.targets.join(", "),
    robot_tools: scene.robot_tools.join(", "),
    handover_instruments: scene.handover_instruments.join(", "),
    rules: rules.trim(),
    output_format: (templates.output_format ?? "").trim(),
  }).trimEnd();
}

export function buildRequests({ release, templates }: PromptsInput): TaskRequest[] {
  for (const name of ["system", "user", "schema"])
    if (!(name in templates)) throw new Error(`the prompts stage needs a \`${name}\` template input`);
  const scenes = new Map(
    (JSON.parse(release.text(SCENES_FILE)) as Scene[]).map((sceneRecord) => [
      sceneRecord.scene_id,
      sceneRecord,
    ]),
  );
  const rules = release.text(RULES_FILE);
  const schema = JSON.parse(templates.schema!) as Json;
  const systems = new Map<string, string>();
  const requests: TaskRequest[] = [];
  for (const [subset, file] of Object.entries(SUBSETS) as [Subset, string][]) {
    const items = release
      .text(file)
      .split("\n")
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as Item);
    for (const item of items) {
      const scene = scenes.get(item.scene);
      if (!scene)
        throw new Error(
          `${file}: item ${item.id} names scene ${item.scene}, which ${SCENES_FILE} does not hold`,
        );
      if (!systems.has(scene.scene_id)) systems.set(scene.scene_id, systemPrompt(scene, rules, templates));
      requests.push({
        id: `${subset}/${item.id}`,
        messages: [
          { role: "system", content: systems.get(scene.scene_id)! },
          {
            role: "user",
            content: fill(templates.user!, {
              prev_action: item.prev_action ?? "NONE",
              utterance: item.utterance,
            }).trimEnd(),
          },
        ],
        schema: { name: "robot_command", schema },
        meta: {
          subset,
          item_id: item.id,
          group: item.group ?? item.id,
          scene: item.scene,
          command_type: item.command_type ?? "unknown",
          form: item.form ?? "unknown",
          gold: item.gold as unknown as Json,
        },
      });
    }
  }
  return requests;
}

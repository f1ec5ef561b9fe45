// The voice-command release as this port reads it (shapes: docs/voice-command-release.md).

export const SUBSETS = {
  clean: "benchmark/commands_v0.1.jsonl",
  asr_generic: "benchmark/commands_v0.1_asr_generic.jsonl",
  asr_kor_or: "benchmark/commands_v0.1_asr_kor_or_stt.jsonl",
  overheard: "benchmark/kor_overheard_v0.1.jsonl",
} as const;
export type Subset = keyof typeof SUBSETS;
export const SCENES_FILE = "benchmark/scenes_v0.1.json";
export const RULES_FILE = "benchmark/rules_v0.1.txt";
export const TRAIN_FILE = "train/train_v0.2.jsonl";

/** A gold slot: the acceptable values, or null (unspecified). */
export type GoldSlot = string[] | null;
export interface GoldAction {
  type: string | string[];
  target: GoldSlot;
  instrument: GoldSlot;
  direction: GoldSlot;
  magnitude: GoldSlot;
}
export interface Gold {
  response: "execute" | "clarify" | "reject";
  actions: GoldAction[];
  alts?: GoldAction[][];
}

export interface Item {
  id: string;
  group?: string;
  scene: string;
  command_type?: string;
  form?: string;
  prev_action?: string | null;
  utterance: string;
  gold: Gold;
}

export interface Scene {
  scene_id: string;
  procedure: string;
  phase: string;
  actions: string[];
  targets: string[];
  robot_tools: string[];
  handover_instruments: string[];
}

export interface Action {
  type: string;
  target: string | null;
  instrument: string | null;
  direction: string | null;
  magnitude: string | null;
}
export interface Command {
  response: "execute" | "clarify" | "reject";
  actions: Action[];
  message: string;
}

/** What travels from the prompts stage to the scorer on each request. */
export interface VoiceMeta {
  subset: Subset;
  item_id: string;
  group: string;
  scene: string;
  command_type: string;
  form: string;
  gold: Gold;
}

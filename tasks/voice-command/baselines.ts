// Built-in models (route `medbench`): input-blind or rule-based rows that need no key and no network.
import type { BaselineInput } from "../task.js";
import { TRAIN_FILE, type Action } from "./release.js";

interface TrainRow {
  response: string;
  actions: Action[];
}

/** The most frequent (response, actions) of the train split, answered for every item (ties: first seen). */
export function prior({ release, requests }: BaselineInput): string[] {
  const counts = new Map<string, number>();
  for (const line of release.text(TRAIN_FILE).split("\n")) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as TrainRow;
    const key = JSON.stringify({ response: row.response, actions: row.actions });
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  let best = "";
  let bestN = -1;
  for (const [candidate, count] of counts)
    if (count > bestN) {
      best = candidate;
      bestN = count;
    }
  const { response, actions } = JSON.parse(best) as TrainRow;
  const reply = JSON.stringify({ response, actions, message: "" });
  return requests.map(() => reply);
}

const STOP_WORDS = /멈춰|멈추|정지|스톱|\bstop\b/i;

/**
 * A keyword rule: a stop word executes STOP, anything else is rejected. Reads the input, knows nothing else.
 */
export function keywordStop({ requests }: BaselineInput): string[] {
  return requests.map((request) => {
    const user = request.messages.find((message) => message.role === "user")?.content ?? "";
    const utterance =
      user
        .split("\n")
        .find((line) => line.startsWith("발화:"))
        ?.slice(3)
        .trim() ?? user;
    const stop = { type: "STOP", target: null, instrument: null, direction: null, magnitude: null };
    return JSON.stringify(
      STOP_WORDS.test(utterance)
        ? { response: "execute", actions: [stop], message: "정지합니다." }
        : { response: "reject", actions: [], message: "" },
    );
  });
}

// The generated plan: the reply without any <think> block (MedARC's use_think variant asks for one).
import type { ParsedReply, TaskModule } from "../task.js";

export function parsePlan(text: string): ParsedReply {
  const plan = text
    .replace(/<think>[\s\S]*?<\/think>/gi, "")
    .replace(/<think>[\s\S]*$/i, "")
    .trim();
  return plan ? { ok: true, value: plan } : { ok: false, value: null, error: "empty reply" };
}

/** The task's parseReply (its `parts.parse`). */
export const parseTaskReply: TaskModule["parseReply"] = ({ reply }) => parsePlan(reply.text);

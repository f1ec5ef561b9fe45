// Built-in models for offline runs: clearly not LLMs, they give the pipeline something to score.
import type { BaselineInput } from "../task.js";
import { CRITERIA } from "./criteria.js";

/**
 * Generation: the note's IMPRESSION (or ASSESSMENT) line, else its last line, as the plan. Reads the input.
 */
export function impression({ requests }: BaselineInput): string[] {
  return requests.map((r) => {
    const note = r.messages.find((m) => m.role === "user")?.content ?? "";
    const m = /(?:IMPRESSION|ASSESSMENT):\s*\n?([^\n]+)/i.exec(note);
    return (m?.[1] ?? note.trim().split("\n").pop() ?? "").trim();
  });
}

const words = (s: string) => new Set(s.toLowerCase().match(/[a-z0-9]+/g) ?? []);

/** A lexical judge: word-overlap F1 of the response against the gold response, mapped to 1-5 for every
 *  criterion. A sanity row, not an LLM judge. */
export function overlapJudge({ requests }: BaselineInput): string[] {
  return requests.map((r) => {
    const text = r.messages.map((m) => m.content).join("\n");
    const tag = (t: string) => new RegExp(`<${t}>([\\s\\S]*?)</${t}>`).exec(text)?.[1] ?? "";
    const a = words(tag("response")),
      g = words(tag("gold_response"));
    const common = [...a].filter((w) => g.has(w)).length;
    const f1 = a.size && g.size ? (2 * common) / (a.size + g.size) : 0;
    const s = 1 + Math.round(4 * f1);
    return JSON.stringify(
      Object.fromEntries(
        CRITERIA.map((c) => [c, { score: s, explanation: `word overlap F1 ${f1.toFixed(2)}` }]),
      ),
    );
  });
}

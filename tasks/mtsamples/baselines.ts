// Built-in models for offline runs: clearly not LLMs, they give the pipeline something to score.
import type { BaselineInput } from "../task.js";
import { CRITERIA } from "./criteria.js";

/**
 * Generation: the note's IMPRESSION (or ASSESSMENT) line, else its last line, as the plan. Reads the input.
 */
export function impression({ requests }: BaselineInput): string[] {
  return requests.map((request) => {
    const note = request.messages.find((message) => message.role === "user")?.content ?? "";
    const match = /(?:IMPRESSION|ASSESSMENT):\s*\n?([^\n]+)/i.exec(note);
    return (match?.[1] ?? note.trim().split("\n").pop() ?? "").trim();
  });
}

const words = (text: string) => new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);

/** A lexical judge: word-overlap F1 of the response against the gold response, mapped to 1-5 for every
 *  criterion. A sanity row, not an LLM judge. */
export function overlapJudge({ requests }: BaselineInput): string[] {
  return requests.map((request) => {
    const text = request.messages.map((message) => message.content).join("\n");
    const tag = (name: string) => new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(text)?.[1] ?? "";
    const response = words(tag("response")),
      gold = words(tag("gold_response"));
    const common = [...response].filter((word) => gold.has(word)).length;
    const f1 = response.size && gold.size ? (2 * common) / (response.size + gold.size) : 0;
    const score = 1 + Math.round(4 * f1);
    return JSON.stringify(
      Object.fromEntries(
        CRITERIA.map((criterion) => [
          criterion,
          { score: score, explanation: `word overlap F1 ${f1.toFixed(2)}` },
        ]),
      ),
    );
  });
}

// Every task's scorer grows linearly with the run: no term compares every item with every other. No clock:
// the check counts the elements the scorer walks (tests/support/walked.ts: Array methods such as filter,
// some, map, Object.keys, typed arrays made) on a synthetic run of n items and of 8n items. A linear scorer
// walks about 8 times as many; one that calls `b.some(...)` inside an `a.filter(...)` about 64 times as
// many.
import { describe, expect, it } from "vitest";
import { syntheticReply as reply, walked } from "../support/walked.js";
import type { ParsedReply, ReplyRecord, ScoreInput, TaskModule, TaskRequest } from "../../tasks/task.js";
import type { Json } from "../../src/util/json.js";
import { task as voiceCommand } from "../../tasks/voice-command/index.js";
import { task as mtsamples } from "../../tasks/mtsamples/index.js";
import { task as noteErrors } from "../../tasks/note-errors/index.js";

/** A voice-command run of n commands per subset: clean, both ASR subsets (the same ids) and overheard. */
function voiceRun(n: number): ScoreInput {
  const requests: TaskRequest[] = [];
  const parsed: (ParsedReply | null)[] = [];
  for (const subset of ["clean", "asr_generic", "asr_kor_or", "overheard"])
    for (let i = 0; i < n; i++) {
      const gold =
        subset === "overheard"
          ? { response: "reject", actions: [] }
          : {
              response: "execute",
              actions: [{ type: "STOP", target: null, instrument: null, direction: null, magnitude: null }],
            };
      const meta = {
        subset,
        item_id: `c${i}`,
        group: `g${i % 50}`,
        scene: "s",
        command_type: i % 3 ? "move" : "stop",
        form: "plain",
        gold,
      };
      requests.push({ id: `${subset}/c${i}`, messages: [], meta } as unknown as TaskRequest);
      const value =
        i % 2 ? { response: "execute", actions: gold.actions } : { response: "reject", actions: [] };
      parsed.push(i % 7 === 3 ? null : { ok: i % 5 !== 1, value: value as unknown as Json });
    }
  return { requests, parsed, replies: requests.map(() => null), params: {} };
}

/** An mtsamples run of n notes, each judged by two judges. */
function mtsamplesRun(n: number): ScoreInput {
  const requests = Array.from(
    { length: n },
    (_, i) =>
      ({ id: `n${i}`, messages: [], meta: { file: `f${i}.txt`, source: `s${i % 4}` } }) as TaskRequest,
  );
  const parsed = requests.map((_, i): ParsedReply | null =>
    i % 9 === 4 ? null : { ok: true, value: `summary ${i}` },
  );
  const judge = (name: string, k: number) => ({
    judge: name,
    replies: Object.fromEntries(
      requests.map((r, i) => [r.id, i % 11 === k ? null : `{"accuracy": {"score": ${1 + ((i + k) % 5)}}}`]),
    ),
  });
  return {
    requests,
    parsed,
    replies: requests.map(() => null),
    params: {},
    judged: [judge("a", 1), judge("b", 2)],
  };
}

/** A note-errors run of n pairs: an error note and its clean twin each. */
function noteErrorsRun(n: number): ScoreInput {
  const requests: TaskRequest[] = [];
  const replies: ReplyRecord[] = [];
  for (let i = 0; i < n; i++)
    for (const side of ["error", "clean"]) {
      const id = `p${i}/${side}`;
      const meta = {
        pair_id: `p${i}`,
        side,
        category: ["diagnosis", "lab", "pharmacotherapy"][i % 3],
        rule: `r${i % 7}`,
        condition: `c${i % 5}`,
        edited_line: "A",
        header_code: "h",
        exposed: i % 4 === 0,
        synthetic: true,
        subset: "test",
        evidence_ref: {
          reference: [`line ${i} of the note`],
          inserted: [`dose ${i}`],
          p_line_hit: i % 2 === 0,
        },
      };
      requests.push({ id, messages: [], meta } as unknown as TaskRequest);
      const verdict = (i + (side === "error" ? 0 : 1)) % 3 ? "Yes" : "No";
      replies.push(reply(id, `Error: ${verdict}\nEvidence: line ${i} of the note, dose ${i}`));
    }
  const parsed = replies.map((r) => noteErrors.parseReply({ reply: r, request: null, params: {} } as never));
  return { requests, parsed, replies, params: {} };
}

const cases: [string, TaskModule, (n: number) => ScoreInput, number][] = [
  ["voice-command", voiceCommand, voiceRun, 300],
  ["mtsamples", mtsamples, mtsamplesRun, 600],
  ["note-errors", noteErrors, noteErrorsRun, 300],
];

describe("every task's scorer is linear in the run", () => {
  for (const [name, task, run, n] of cases)
    it(`${name}: 8 times the items, at most 10 times the elements walked`, () => {
      const small = run(n);
      const large = run(8 * n);
      const ws = walked(() => void task.score(small));
      const wl = walked(() => void task.score(large));
      expect(ws).toBeGreaterThan(n); // the counter sees the scorer's work
      expect(wl / ws).toBeLessThan(10);
    });
});

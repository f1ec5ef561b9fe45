// A request's final refusal in the reply memo: a server that refused the item itself (its context length, a
// parameter) refuses it again, so later builds take the refusal from the memo instead of sending the request
// each time; `--refresh model` sends it again (docs/model-requests.md, "Refusals"). Never an answer:
// recall() of src/model/reply-memo.ts ignores these entries.
import type { CallOutcome } from "./client.js";

export interface MemoRefusal {
  kind: "refused";
  status: number;
  /** The server's body, redacted of secrets by the client. */
  body: string;
}

type Refused = Extract<CallOutcome, { kind: "refused" }>;

/** The memo entry of a final refusal. */
export function memoRefusal(outcome: Refused): MemoRefusal {
  return { kind: "refused", status: outcome.status, body: outcome.body };
}

/** A stored entry, when it is a refusal: as the outcome it was (no try made this build). */
export function recallRefusal(entry: Buffer | null): Refused | null {
  if (!entry) return null;
  try {
    const memo = JSON.parse(entry.toString("utf8")) as Partial<MemoRefusal>;
    if (memo.kind !== "refused" || typeof memo.status !== "number" || typeof memo.body !== "string")
      return null;
    return { kind: "refused", status: memo.status, body: memo.body, attempts: 0 };
  } catch {
    return null;
  }
}

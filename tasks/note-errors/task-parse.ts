// The parse part: a reply's verdict.
import type { ParseInput, ParsedReply } from "../task.js";
import type { Json } from "../../src/util/json.js";
import { parseVerdict } from "./verdict.js";

export function parseReply({ reply }: ParseInput): ParsedReply {
  const v = parseVerdict(reply);
  return { ok: v.verdict !== null, value: v as unknown as Json };
}

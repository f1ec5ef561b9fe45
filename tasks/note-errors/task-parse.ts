// The parse part: a reply's verdict.
import type { ParseInput, ParsedReply } from "../task.js";
import type { Json } from "../../src/util/json.js";
import { parseVerdict } from "./verdict.js";

export function parseReply({ reply }: ParseInput): ParsedReply {
  const parsed = parseVerdict(reply);
  return { ok: parsed.verdict !== null, value: parsed as unknown as Json };
}

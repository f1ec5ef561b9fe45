// What a roster entry's `reasoning` requires of its run, read from what the run recorded: the fields its
// requests sent (metrics.request: the route's and any override's, in OpenAI's, Anthropic's or Gemini's
// fields), its deviations from the spec (a thinking-off task sent at the model's lowest effort) and its
// thinking audit (the model stage counts every reply with a reasoning field, a think tag or reasoning tokens
// in its usage). A run that does not hold cannot stand for the entry; the reason names what was recorded and
// the build that would hold.
import type { Json } from "../util/json.js";
import type { ReasoningRequirement } from "./declare.js";
import { headlineDeviations, type MetricsJson } from "./runs.js";
import type { Deviation } from "../util/metrics.js";

/** The reasoning settings a request body carried, where the known route fields put them. */
export interface ReasoningSent {
  /** reasoning_effort, or reasoning.effort (OpenRouter), as sent; null when none was. */
  effort: { value: string; field: string } | null;
  /** enable_thinking (top level or chat_template_kwargs) or thinking.type, as sent; null when none was. */
  thinking: { value: boolean; field: string } | null;
}

const obj = (value: Json | undefined): Record<string, Json> | null =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? value : null;

export function reasoningSent(request: Json | undefined): ReasoningSent {
  const fields = obj(request) ?? {};
  let effort: ReasoningSent["effort"] = null;
  if (typeof fields.reasoning_effort === "string")
    effort = { value: fields.reasoning_effort, field: "reasoning_effort" };
  const nested = obj(fields.reasoning);
  if (nested && typeof nested.effort === "string")
    effort = { value: nested.effort, field: "reasoning.effort" };
  let thinking: ReasoningSent["thinking"] = null;
  const kwargs = obj(fields.chat_template_kwargs);
  if (typeof fields.enable_thinking === "boolean")
    thinking = { value: fields.enable_thinking, field: "enable_thinking" };
  if (kwargs && typeof kwargs.enable_thinking === "boolean")
    thinking = { value: kwargs.enable_thinking, field: "chat_template_kwargs.enable_thinking" };
  const thinkingField = obj(fields.thinking);
  if (thinkingField && typeof thinkingField.type === "string")
    thinking = { value: thinkingField.type !== "disabled", field: "thinking.type" };
  return { effort, thinking: geminiThinking(fields) ?? thinking };
}

/** Gemini's generationConfig.thinkingConfig: a thinkingBudget of 0 is off, any other (-1: dynamic) on; a
 *  thinkingLevel is an effort, so on. */
function geminiThinking(fields: Record<string, Json>): ReasoningSent["thinking"] {
  const config = obj(obj(fields.generationConfig)?.thinkingConfig);
  const at = "generationConfig.thinkingConfig";
  if (typeof config?.thinkingBudget === "number")
    return { value: config.thinkingBudget !== 0, field: `${at}.thinkingBudget` };
  if (typeof config?.thinkingLevel === "string") return { value: true, field: `${at}.thinkingLevel` };
  return null;
}

/** The run's thinking-off task sent at its model's lowest effort instead (metrics.json deviations). */
function lowestEffort(metrics: MetricsJson): Deviation | null {
  return headlineDeviations(metrics).find((x) => x.field === "thinking" && x.spec === "off") ?? null;
}

interface Audit {
  replies_with_reasoning_field?: number;
  replies_with_think_block?: number;
  /** Replies whose usage reports reasoning tokens (hidden reasoning); absent when none reported a count. */
  replies_with_reasoning_tokens?: number;
  thinking_off?: boolean;
}

/** Why the run does not hold the requirement (null when it does); `build` is the command that rebuilds
 *  it. */
export function reasoningProblem(
  need: ReasoningRequirement | null,
  metrics: MetricsJson,
  build: string,
): string | null {
  if (need === null) return null;
  const request = metrics.metrics?.request;
  if (obj(request)?.builtin === true) return null; // a built-in baseline sends nothing
  const { effort, thinking } = reasoningSent(request);
  const lowest = lowestEffort(metrics);
  if (need === "low") {
    // Effort low as sent, or the lowest effort the route declares for the model, on any protocol.
    if (effort?.value === "low" || lowest) return null;
    const sent = effort
      ? `sends reasoning effort ${effort.value} (metrics.request.${effort.field})`
      : "sends no reasoning effort (metrics.request has no reasoning_effort or reasoning.effort), so the " +
        "server's default effort ran";
    return (
      `its recorded request ${sent}; the roster needs reasoning effort low: give the model's route ` +
      "request.reasoning_low (e.g. { reasoning_effort: low }) and list the model in its " +
      `reasoning_low_models (registry/providers.yaml or --registry FILE), then ${build}`
    );
  }
  const asked =
    effort && effort.value !== "none"
      ? `metrics.request.${effort.field} is ${effort.value}`
      : thinking?.value === true
        ? `metrics.request.${thinking.field} is true`
        : null;
  const audit = obj(metrics.metrics?.thinking_audit) as Audit | null;
  const fix =
    "a run whose thinking audit holds completes the check: switch thinking off with the route's " +
    "request.thinking_off fields or a validated per-model override (the spec's request overrides), " +
    `then ${build}`;
  if (lowest)
    return (
      `it ran at its model's lowest reasoning effort instead of thinking off (metrics.json deviations: ` +
      `thinking sent ${JSON.stringify(lowest.sent)}, rule ${lowest.rule}), ` +
      `and the roster needs it off: ${fix}`
    );
  if (asked)
    return `its recorded request asks for reasoning (${asked}), and the roster needs it off: ${fix}`;
  if (!audit) return `it records no thinking audit (metrics.thinking_audit): ${fix}`;
  if (audit.thinking_off === true) return null;
  const counts = [
    `${audit.replies_with_reasoning_field ?? "?"} replies with a reasoning field`,
    `${audit.replies_with_think_block ?? "?"} with a think tag`,
  ];
  if (audit.replies_with_reasoning_tokens !== undefined)
    counts.push(
      `${audit.replies_with_reasoning_tokens} with reasoning tokens in their usage (hidden reasoning)`,
    );
  return (
    `reasoning-on: ${counts.slice(0, -1).join(", ")} and ${counts.at(-1)!} (metrics.thinking_audit), so ` +
    `it is reported as reasoning-on and not compared as a thinking-off run; ${fix}`
  );
}

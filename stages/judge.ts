// judge: every judge model scores every generated reply. Each judge's calls go through the per-request
// cache under its own model, so adding a judge calls only the new one, and a changed judge prompt (an
// input of this stage) reruns this stage and what follows, never the model under test.
import { type StageContext, type StageKind } from "../src/contract/stage.js";
import type { SendEstimate } from "../src/model/budget.js";
import type { TaskRequest } from "../tasks/task.js";
import { StageError } from "../src/errors.js";
import { stableJson, type Json } from "../src/util/json.js";
import { RecordsWriter, type ParsedRecord } from "../src/contract/records.js";
import { inputRecords } from "./records-io.js";
import {
  callModel,
  estimateModel,
  GENERATION_PARAMS,
  MODEL_PATTERN,
  routeIdentity,
  routeProblems,
  type Params as ModelParams,
} from "./model.js";

interface Params {
  judges: string[];
  max_tokens?: number;
  temperature?: number;
  [field: string]: Json | undefined;
}

/** The judges a stage names (one or a list), leaving out what is not a name (its parameter check says
 *  so). */
function judgeList(params: Json): string[] {
  const declared = (params as Params).judges as Json;
  const list = typeof declared === "string" ? [declared] : Array.isArray(declared) ? declared : [];
  return list.filter((x): x is string => typeof x === "string");
}

function judgesOf(params: Json): string[] {
  const declared = (params as Params).judges as Json;
  const list = judgeList(params);
  if (list.length === 0 || (Array.isArray(declared) && list.length !== declared.length)) {
    throw new StageError(
      "the judge stage needs params.judges: a list of ROUTE/MODEL",
      "set it in the spec (e.g. judges: {$var: judges}) or pass --judge ROUTE/MODEL",
    );
  }
  return [...new Set(list)];
}

export const judge: StageKind = {
  kind: "judge",
  inBundle: "model",
  inputs: {
    requests: { outputs: { requests: "requests" } },
    parsed: { outputs: { parsed: "parsed" } },
    release: { release: true, optional: true },
  },
  otherFiles: true, // the judge prompt templates
  outputs: { judged: "judged", audit: "audit" },
  required: ["judges"],
  params: {
    judges: { type: ["array", "string"], items: { type: "string", pattern: MODEL_PATTERN } },
    max_tokens: GENERATION_PARAMS.max_tokens,
    temperature: GENERATION_PARAMS.temperature,
  },
  // A built-in judge (route medbench) is a task baseline: its code is then in the key too.
  taskParts: (params) => [
    "judge",
    ...judgesOf(params)
      .filter((judge) => judge.startsWith("medbench/"))
      .map((judge) => `baseline ${judge}` as const),
  ],
  sendsRequests: (params) => judgeList(params).some((judge) => !judge.startsWith("medbench/")),
  check(stage, _task, env) {
    return env ? routeProblems(judgeList(stage.params), "/params/judges", env) : [];
  },
  async identify(ctx) {
    return Object.fromEntries(judgesOf(ctx.params).map((judge) => [judge, routeIdentity(ctx, judge)]));
  },
  async estimate(ctx) {
    const judgeReqs = await judgeRequestsOf(ctx);
    const out: Record<string, SendEstimate> = {};
    for (const model of judgesOf(ctx.params)) {
      const estimate = await estimateModel(ctx, judgeParams(ctx.params as Params, model), judgeReqs);
      if (estimate) out[model] = estimate;
    }
    return out;
  },
  async run(ctx) {
    const judgeReqs = await judgeRequestsOf(ctx);
    const rows = new RecordsWriter<"judged">(ctx.tempPath());
    const audits: Record<string, Json> = {};
    for (const model of judgesOf(ctx.params)) {
      const { replies, audit } = await callModel(ctx, judgeParams(ctx.params as Params, model), judgeReqs);
      for (const reply of replies)
        rows.write({
          id: reply.id,
          judge: model,
          text: reply.error === null ? reply.text : null,
          error: reply.error,
          request_sha256: reply.request_sha256,
        });
      audits[model] = audit;
    }
    return { judged: rows.close(), audit: stableJson(audits) };
  },
};

/** One judge's model parameters: the stage's generation fields. */
function judgeParams(settings: Params, model: string): ModelParams {
  return { model, max_tokens: settings.max_tokens, temperature: settings.temperature };
}

/** The judges' requests: the task's judge prompt over each request and its parsed reply. */
async function judgeRequestsOf(ctx: StageContext): Promise<TaskRequest[]> {
  if (!ctx.task.judgeRequests)
    throw new StageError("this task has no judge prompt", "remove the judge stage from the spec");
  const requests = [...(await inputRecords(ctx, "requests", "requests"))];
  const parsed = new Map<string, ParsedRecord["parsed"]>();
  for (const record of await inputRecords(ctx, "parsed", "parsed")) parsed.set(record.id, record.parsed);
  const templates: Record<string, string> = {};
  for (const [name, input] of Object.entries(ctx.inputs))
    if (!["requests", "parsed", "release"].includes(name)) templates[name] = input.text();
  const judgeReqs = ctx.task.judgeRequests({
    requests,
    parsed: requests.map((request) => parsed.get(request.id) ?? null),
    templates,
    params: ctx.params,
  });
  return judgeReqs;
}

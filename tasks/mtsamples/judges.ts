// The judges' prompt: one judge request per plan (shared docs: mtsamples.md; the choices where it is
// silent: docs/protocols/mtsamples.md). How a judge reply is read: judge-readings.ts.
import type { ParsedReply, TaskModule, TaskRequest } from "../task.js";

/** Every placeholder filled in one pass, each value verbatim (as Python's string.Template.substitute fills
 *  HELM's prompt): a value holding `{gold_response}` or `$&` is inserted as it is, never filled again. */
export function fillJudge(
  template: string,
  parts: { patient: string; response: string; gold: string },
): string {
  const values: Record<string, string> = {
    patient_information: parts.patient,
    response: parts.response,
    gold_response: parts.gold,
  };
  return template.replace(
    /\{(patient_information|response|gold_response)\}/g,
    (_placeholder, name: string) => values[name]!,
  );
}

export function judgeRequests(
  requests: TaskRequest[],
  parsed: (ParsedReply | null)[],
  templates: Record<string, string>,
): TaskRequest[] {
  const template = templates.judge;
  if (!template) throw new Error("the judge stage needs a `judge` template input");
  const out: TaskRequest[] = [];
  requests.forEach((request, i) => {
    const parsedReply = parsed[i];
    if (!parsedReply || !parsedReply.ok) return; // no plan to judge (an API error, or an empty reply)
    const meta = request.meta as { input: string; reference: string };
    out.push({
      id: request.id,
      messages: [
        {
          role: "user",
          content: fillJudge(template, {
            patient: meta.input,
            response: String(parsedReply.value),
            gold: meta.reference,
          }),
        },
      ],
      meta: {},
    });
  });
  return out;
}

/** The task's judgeRequests (its `parts.judge`). */
export const taskJudgeRequests: NonNullable<TaskModule["judgeRequests"]> = ({
  requests,
  parsed,
  templates,
}) => judgeRequests(requests, parsed, templates);

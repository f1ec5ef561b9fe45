// Each request's first body (in the first response format it tries), made once per run of a model stage
// for what needs its bytes: the token-rate check, a shard's share, the requests without a reply
// (--max-cost, batches, status) and the send itself all take this one, serialised and hashed once. The
// check before anything is sent makes each body for its deviations and keeps none (kept, every body of the
// stage was held at once). A body is forgotten when its item is sent (a lower format's body is made then).
import type { Json } from "../src/util/json.js";
import { ruledRequest, type Deviation, type RuledParams } from "../src/model/deviations.js";
import { modelRule } from "../src/model/model-rules.js";
import {
  itemFieldsOf,
  UnsendableRequest,
  type Protocol,
  type RoutedModel,
  type WireFormat,
} from "../src/model/protocol.js";
import { StageError } from "../src/errors.js";
import type { TaskRequest } from "../tasks/task.js";

/** A body ready to send: its bytes and its key. */
export interface Prepared {
  body: Record<string, Json>;
  payload: Buffer;
  key: string;
  format: WireFormat;
}

/** A body made, and how the model's rules made it differ from the spec (src/model/deviations.ts). */
interface Made {
  body: Record<string, Json>;
  deviations: Deviation[];
  prepared?: Prepared;
}

/** What every body of one stage's requests to one route's model is made from: the model reached through its
 *  route and protocol, and the stage's parameters. */
export interface BodyMaker extends RoutedModel {
  params: RuledParams;
}

/**
 * The exact body sent, and its deviations: the task's request, the spec's fields as the model's rules send
 * them, the route's fields, then per-model overrides. A body the route cannot send refuses the stage.
 */
export function madeBody(
  { protocol, params, route, model }: BodyMaker,
  req: TaskRequest,
  format: WireFormat,
): { body: Record<string, Json>; deviations: Deviation[] } {
  try {
    const ruled = ruledRequest(req, params, route, model);
    return {
      body: protocol.body(ruled.req, ruled.params, route, model, format),
      deviations: ruled.deviations,
    };
  } catch (e) {
    if (e instanceof UnsendableRequest) throw new StageError(e.message, e.fix);
    throw e;
  }
}

/** The format a request is first sent in: the protocol's best when it asks for a schema, else none. */
export const firstFormat = (protocol: Protocol, req: TaskRequest): WireFormat =>
  req.schema ? protocol.formats[0]! : "none";

export class FirstBodies {
  private readonly made: (Made | undefined)[];
  // The check's deviations by kind of request (kindOf); null: each request's body is made.
  private readonly kinds: Map<string, Deviation[]> | null;

  constructor(
    readonly maker: BodyMaker,
    readonly requests: readonly TaskRequest[],
  ) {
    this.made = new Array<Made | undefined>(requests.length);
    // A model rule that fixes an item field (absurd, but a body's check would compare it) checks every body.
    const fixed = Object.keys(modelRule(maker.route, maker.model)?.rule.fixed ?? {});
    const itemFields = itemFieldsOf(maker.protocol);
    this.kinds = fixed.some((field) => itemFields.includes(field)) ? null : new Map();
  }

  /** Request `i`'s first body and its deviations. */
  body(i: number): Made {
    let made = this.made[i];
    if (!made) {
      const req = this.requests[i]!;
      this.made[i] = made = madeBody(this.maker, req, firstFormat(this.maker.protocol, req));
    }
    return made;
  }

  /** How request `i`'s first body differs from the spec, and whether it can be made (else StageError). What
   *  decides both is the request's fields but its item's own text (ruledRequest; Protocol.body refuses by
   *  those alone): a body is made for the first request of each kind, and kept by none (held, every body
   *  of the stage was held at once: a 20,010-item build peaked 52 MB higher, 283 MB against 231;
   *  docs/performance.md). */
  deviations(i: number): Deviation[] {
    const req = this.requests[i]!;
    const held = this.made[i];
    if (held) return held.deviations;
    const kind = this.kinds && kindOf(req);
    let deviations = kind === null ? undefined : this.kinds!.get(kind);
    if (!deviations) {
      deviations = madeBody(this.maker, req, firstFormat(this.maker.protocol, req)).deviations;
      if (kind !== null) this.kinds!.set(kind, deviations);
    }
    return deviations;
  }

  /** Request `i`'s first body, serialised, with its key. */
  prepared(i: number): Prepared {
    const made = this.body(i);
    if (!made.prepared) {
      const { protocol, route } = this.maker;
      const format = firstFormat(protocol, this.requests[i]!);
      made.prepared = { body: made.body, format, ...protocol.serialise(route, made.body) };
    }
    return made.prepared;
  }

  /** Request `i`'s first body as it is sent: no longer held here. */
  take(i: number): Prepared {
    const prepared = this.prepared(i);
    this.forget(i);
    return prepared;
  }

  /** Request `i` is answered (in its first format or another): its body is no longer held. */
  forget(i: number): void {
    this.made[i] = undefined;
  }
}

// A request's kind for the check before sending: its configuration, its schema (the object a task's requests
// share) and its generation fields; its messages aside.
const schemaIds = new WeakMap<object, number>();
let lastSchemaId = 0;
function kindOf(req: TaskRequest): string {
  let schema = 0;
  if (req.schema) {
    schema = schemaIds.get(req.schema) ?? ++lastSchemaId;
    schemaIds.set(req.schema, schema);
  }
  return `${req.configuration ?? ""}\n${schema}\n${JSON.stringify(req.generation ?? null)}`;
}

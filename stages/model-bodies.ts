// Each request's first body (in the first response format it tries), made once per run of a model stage
// for what needs its bytes: the token-rate check, a shard's share, the requests without a reply
// (--max-cost, batches, status) and the send itself all take this one, serialised and hashed once. The
// check before anything is sent makes each body for its deviations and keeps none (kept, every body of the
// stage was held at once). A body is forgotten when its item is sent (a lower format's body is made then).
import type { Json } from "../src/util/json.js";
import { ruledRequest, type Deviation, type RuledParams } from "../src/model/deviations.js";
import {
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

  constructor(
    readonly maker: BodyMaker,
    readonly requests: readonly TaskRequest[],
  ) {
    this.made = new Array<Made | undefined>(requests.length);
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

  /** How request `i`'s first body differs from the spec. The body is not kept when it was not kept already:
   *  the check before anything is sent asks this of every request, and holding each body made the stage
   *  hold all of them at once (a 20,010-item build peaked 66 MB higher; docs/performance.md). */
  deviations(i: number): Deviation[] {
    const req = this.requests[i]!;
    return (this.made[i] ?? madeBody(this.maker, req, firstFormat(this.maker.protocol, req))).deviations;
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

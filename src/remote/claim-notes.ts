// What a machine says on the terminal about the claims it waits on (src/remote/claims.ts): whom it waits for
// and until when, and why it took a request over. Once per holder and reason, not once per request: a
// build waits on one machine for many requests at a time.

/** A claim as written to the store: who holds it. */
export interface ClaimBody {
  writer: string; // MEDBENCH_MACHINE_ID, or user@host
  token: string; // the holding process's: its own claim, read back, is its own
  host: string;
  pid: number;
  /** How long the claim holds unless renewed (its holder's MEDBENCH_CLAIM_TTL_S): absent in older claims. */
  ttlMs?: number;
  nonce?: string;
}

/** Why a claim was taken over: it passed its deadline, its process is gone or a zombie (this host), or the
 *  reply it led to was refused as damaged. */
export type TakeoverWhy = "deadline" | "gone" | "zombie" | "damaged";

const WHY: Record<TakeoverWhy, string> = {
  deadline: "its claim passed its deadline with no reply",
  gone: "its process is gone",
  zombie: "its process was killed (a zombie, not yet reaped)",
  damaged: "the reply it stored was refused as damaged",
};

/** A holder as a person reads it: the machine, the process and the host. */
export function holderName(holder: ClaimBody | null): string {
  if (!holder || typeof holder.host !== "string") return "an unreadable claim's holder";
  return `${holder.writer} (pid ${holder.pid} on ${holder.host})`;
}

/** A moment on this machine's clock (performance.now()) as a UTC time of day. */
function clockTime(at: number): string {
  return new Date(Date.now() + (at - performance.now())).toISOString().slice(11, 19) + " UTC";
}

export class ClaimNotes {
  private readonly said = new Set<string>();

  constructor(private readonly inform: (message: string) => void) {}

  private once(key: string, message: () => string): void {
    if (this.said.has(key)) return;
    this.said.add(key);
    this.inform(message());
  }

  /** This machine waits for a reply another holds a claim to. */
  waiting(holder: ClaimBody | null, until: number, ttlMs: number): void {
    this.once(`wait ${holder?.token}`, () => {
      const ttl = `its holder's MEDBENCH_CLAIM_TTL_S=${ttlMs / 1000}`;
      return (
        `waiting for ${holderName(holder)}, which claimed requests this build needs: their replies are ` +
        `taken from the remote as they come; a request is sent here if its claim is not answered by its ` +
        `deadline, the first at ${clockTime(until)} (${ttl})`
      );
    });
  }

  /** This machine replaced another's claim and sends the request. */
  tookOver(holder: ClaimBody | null, why: TakeoverWhy): void {
    this.once(`took ${holder?.token} ${why}`, () => {
      return `taking over the requests claimed by ${holderName(holder)}: ${WHY[why]}`;
    });
  }

  /** A claim this process held was taken over while it did not run (stopped past its deadline). */
  lost(ttlMs: number): void {
    this.once("lost", () => {
      return (
        `a request this machine claimed passed its claim's deadline (${ttlMs / 1000} s) before it was ` +
        "answered (this process was stopped, or its server slow), and another machine took it over: " +
        "such a request's reply is taken from the remote, or that machine waited for, instead of sending " +
        "the request again"
      );
    });
  }
}

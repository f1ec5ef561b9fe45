// A route's servers when it lists replicas: each request goes to the one with the fewest requests
// outstanding; one that fails (no connection, a timeout, a 5xx) is set aside for a while that doubles with
// each failure in a row (1 s up to 60 s) and tried again after it; an answer puts it back at once.
const FIRST_ASIDE_MS = 1000;
const MOST_ASIDE_MS = 60_000;

export class Replicas {
  private readonly outstanding: number[];
  private readonly asideUntil: number[];
  private readonly failuresInARow: number[];

  constructor(
    /** The servers' URLs as records show them (query values hidden), the route's base_url first. */
    readonly servers: readonly string[],
    private readonly now: () => number = Date.now,
  ) {
    this.outstanding = servers.map(() => 0);
    this.asideUntil = servers.map(() => 0);
    this.failuresInARow = servers.map(() => 0);
  }

  /** Whether a server other than those in `tried` may be asked now. */
  otherAvailable(tried: ReadonlySet<number>): boolean {
    return this.servers.some((_server, index) => !tried.has(index) && this.asideUntil[index]! <= this.now());
  }

  /** The server for the next try: the fewest outstanding among those not set aside (the first on a tie);
   *  when all are set aside, the one whose time aside ends first. */
  pick(): number {
    const now = this.now();
    let best = -1;
    for (let index = 0; index < this.servers.length; index++) {
      if (this.asideUntil[index]! > now) continue;
      if (best < 0 || this.outstanding[index]! < this.outstanding[best]!) best = index;
    }
    if (best >= 0) return best;
    return this.asideUntil.indexOf(Math.min(...this.asideUntil));
  }

  begin(index: number): void {
    this.outstanding[index]!++;
  }

  end(index: number): void {
    this.outstanding[index]!--;
  }

  failed(index: number): void {
    const inARow = ++this.failuresInARow[index]!;
    const aside = Math.min(MOST_ASIDE_MS, FIRST_ASIDE_MS * 2 ** (inARow - 1));
    this.asideUntil[index] = this.now() + aside;
  }

  answered(index: number): void {
    this.failuresInARow[index] = 0;
    this.asideUntil[index] = 0;
  }
}

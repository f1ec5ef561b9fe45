// What the fakes of other protocols than OpenAI's (scripts/fake-anthropic.mjs, scripts/fake-gemini.mjs)
// share: their common command-line options, the replayed shapes of their corpus folder, the record of each
// request received, and the answer to a request their own checks let through (a replayed shape on its first
// attempts, a policy's HTTP error, or the protocol's reply to the policy's text).
import { createHash } from "node:crypto";
import { basename } from "node:path";
import { POLICIES } from "./fake-openai.mjs";
import { loadReplies, replayed } from "./provider-replies/index.mjs";

export const sha = (text) => createHash("sha256").update(text).digest("hex");

/**
 * Reads --port, --policy, --api-key, --fault-attempts and --replay NAME=PERIOD over `defaults`;
 * `more(opts, arg, value)` reads a fake's own options and answers whether it knew `arg`.
 */
export function parseProviderArgs(argv, defaults, more = () => false) {
  const opts = { policy: "voice-command", apiKey: null, replay: {}, faultAttempts: 1, ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => argv[++i];
    if (arg === "--port") opts.port = Number(value());
    else if (arg === "--policy") opts.policy = value();
    else if (arg === "--api-key") opts.apiKey = value();
    else if (arg === "--fault-attempts") opts.faultAttempts = Number(value());
    else if (arg === "--replay") {
      const [name, period] = value().split("=");
      opts.replay[name] = Number(period ?? 1);
    } else if (!more(opts, arg, value)) throw new Error(`unknown option ${arg}`);
  }
  if (!(opts.policy in POLICIES)) throw new Error(`unknown policy ${opts.policy}`);
  return opts;
}

/** One fake's requests: counted in `stats`, their attempts by body, answered from `opts.policy`. */
export class ProviderRequests {
  /** `label` names the provider in errors; `dir` is its folder of scripts/provider-replies. */
  constructor(opts, stats, { label, dir }) {
    this.opts = opts;
    this.stats = stats;
    this.attempts = new Map();
    this.label = label;
    this.folder = basename(dir);
    this.corpus = loadReplies(dir);
    for (const name of Object.keys(opts.replay)) this.entry(name); // a wrong name fails at start
  }

  entry(name) {
    const found = this.corpus[name];
    if (!found) throw new Error(`no ${this.label} reply ${name} in scripts/provider-replies/${this.folder}`);
    return found;
  }

  /** The shape served to the requests whose messages hash to `hash`, if any (each its own residue). */
  shapeFor(hash) {
    const replay = this.opts.replay;
    return Object.keys(replay).find((name, i) => hash % replay[name] === i % replay[name]);
  }

  /** Records a request (`record`'s fields and its fault); returns the function that names its fault. */
  received(record) {
    this.stats.requests++;
    const kept = { ...record, fault: null };
    this.stats.received.push(kept);
    return (fault) => {
      this.stats.faults[fault] = (this.stats.faults[fault] ?? 0) + 1;
      kept.fault = fault;
    };
  }

  /**
   * The answer to a request its fake's checks let through: `chat` the messages it stands for, `model` the
   * one named, `count` from received(); `errorBody(status)` the protocol's error, `reply(out, bodyKey)` its
   * reply to the policy's answer. Returns { status, headers?, body }.
   */
  answer({ body, chat, model, count }, { errorBody, reply }) {
    const bodyKey = sha(JSON.stringify(body));
    const attempt = (this.attempts.get(bodyKey) ?? 0) + 1;
    this.attempts.set(bodyKey, attempt);
    const hash = parseInt(sha(JSON.stringify(chat.messages)).slice(0, 8), 16);
    const out = POLICIES[this.opts.policy](chat, this.opts);
    const shape = this.shapeFor(hash);
    if (shape && attempt <= this.opts.faultAttempts) {
      count(`replay-${shape}`);
      const text = typeof out === "object" ? out.content : out;
      return replayed(this.entry(shape), { model }, text);
    }
    if (typeof out === "object" && out.http_error) {
      count(`policy-${out.http_error}`);
      return { status: out.http_error, body: errorBody(out.http_error) };
    }
    this.stats.replies++;
    return { status: 200, body: reply(out, bodyKey) };
  }
}

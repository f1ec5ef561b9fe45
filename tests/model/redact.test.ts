// Redaction of what a server sends back (src/model/redact.ts), table-driven: configured values go whatever
// their shape, token-shaped strings go from error bodies, ordinary words stay.
import { describe, expect, it } from "vitest";
import { redact, redactSecrets, secretValues } from "../../src/model/redact.js";
import type { Route } from "../../src/model/registry.js";

const KEY = "plain-looking-key-value-42";

describe("redact", () => {
  it.each([
    [`{"message":"bad key ${KEY}"}`, `{"message":"bad key [redacted]"}`],
    ["Incorrect API key provided: Bearer abc.def-ghi_jkl", "Incorrect API key provided: Bearer [redacted]"],
    ["authorization: bearer%20tok3n-value-xyz", "authorization: bearer%20[redacted]"],
    ["session sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX ended", "session [redacted] ended"],
    ["gsk_0123456789abcdef0123 and hf_abcdefghijklmnopqrstu", "[redacted] and [redacted]"],
    ["rate limited, try again in 20 s", "rate limited, try again in 20 s"],
    ["the model sk-1 is small", "the model sk-1 is small"],
  ])("%s", (input, expected) => {
    expect(redact(input, [KEY])).toBe(expected);
  });

  it("takes only configured values out of a reply's own text", () => {
    expect(redactSecrets(`echo ${KEY}; Bearer words stay`, [KEY])).toBe(
      "echo [redacted]; Bearer words stay",
    );
  });

  it("collects every route's key from the environment and its header values, short ones too", () => {
    const route = (name: string, api_key_env: string | null, headers: Record<string, string>) =>
      ({ name, api_key_env, headers }) as unknown as Route;
    const secrets = secretValues(
      [
        route("a", "A_KEY", {}),
        route("b", "B_KEY", { authorization: "Bearer header-secret-1" }),
        route("c", null, { "x-v": "1" }),
      ],
      { A_KEY: KEY, B_KEY: "short" },
    );
    // Longest first; a short value is a secret too, matched as a whole word only.
    expect(secrets).toEqual([KEY, "Bearer header-secret-1", "header-secret-1", "short", "1"]);
    expect(redactSecrets("x-v 1 of 10, 21 and short-lived, shorts", secrets)).toBe(
      "x-v [redacted] of 10, 21 and [redacted]-lived, shorts",
    );
  });
});

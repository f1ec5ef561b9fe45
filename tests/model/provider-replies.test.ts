// The provider reply corpus (scripts/provider-replies): every entry is well formed and names its source, and
// the fake server serves an entry over real HTTP as written, with its placeholders filled in.
import { describe, expect, it } from "vitest";
import { request } from "node:http";
import { startFake } from "../support/fake.js";
import { cleanedAfterEach } from "../support/rig.js";
// @ts-expect-error: a plain ES module of the scripts, without types
import { loadProviderReplies } from "../../scripts/provider-replies/index.mjs";

const { servers } = cleanedAfterEach();

interface Entry {
  source: { provider: string; document: string };
  status: number;
  body: unknown;
}

function post(url: string, body: unknown): Promise<{ status: number; text: string; type: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/chat/completions`, { method: "POST" }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode!,
          text: Buffer.concat(chunks).toString("utf8"),
          type: String(res.headers["content-type"]),
        }),
      );
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

describe("provider reply corpus", () => {
  const corpus = loadProviderReplies() as Record<string, Entry>;

  it("has entries, each naming its provider and document", () => {
    expect(Object.keys(corpus).length).toBeGreaterThan(0);
    for (const entry of Object.values(corpus)) {
      expect(entry.source.provider.length).toBeGreaterThan(0);
      expect(entry.source.document.length).toBeGreaterThan(0);
    }
  });

  it.each(Object.keys(corpus))("the fake server replays %s as written", async (name) => {
    const fake = await startFake({ policy: "echo", replay: { [name]: 1 } });
    servers.push(fake);
    const body = { model: "replay-model", messages: [{ role: "user", content: "the answer" }] };
    const got = await post(fake.url, body);
    const entry = corpus[name]!;
    expect(got.status).toBe(entry.status);
    if (typeof entry.body === "string") return;
    const sent = JSON.parse(got.text) as { model?: unknown };
    expect(got.type).toContain("json");
    if ((entry.body as { model?: unknown }).model === "{{model}}") expect(sent.model).toBe("replay-model");
    expect(got.text).not.toContain("{{");
  });
});

// Reasoning models run the shipped tasks with their deviations from the spec on record: the shipped openai
// route (its base URL from OPENAI_BASE_URL, as openai-node reads it) sends gpt-5* what it takes, against the
// fake server, which answers another temperature as OpenAI does (400 unsupported_value); metrics.json, the
// build's output and `check` say what differs. A spec's no_deviation refuses instead; a route's rule is
// checked where it is written.
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { Project, cleanedAfterEach, expectCleanFailure } from "../support/rig.js";
import { REPO } from "../support/helpers.js";
import { startFake, type Fake } from "../support/fake.js";
import { startGeminiFake } from "../support/fake-gemini.js";

const { servers, projects } = cleanedAfterEach();
const VC = "specs/voice-command.yaml";
const NE = "specs/note-errors.yaml";
const KEY = "sk-test-deviations-0123456789";

async function setup(policy = "voice-command"): Promise<{ fake: Fake; p: Project }> {
  const fake = await startFake({ policy });
  servers.push(fake);
  const p = new Project();
  projects.push(p);
  return { fake, p };
}

/** The environment of a user with the shipped openai route pointed at `url`. */
const envAt = (url: string) => ({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: url });
const metricsAt = (p: Project, dir: string) => JSON.parse(p.read(`${dir}/metrics.json`));
const VC_RUN = "results/kor-surgical-robot-voice-command/openai_gpt-5.1";

describe("the fake server answers as OpenAI does", () => {
  it("refuses temperature 0 to a reasoning model with 400 unsupported_value, takes 1", async () => {
    const { fake } = await setup();
    const post = (body: object) =>
      fetch(`${fake.url}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "x" }], ...body }),
      });
    const refused = await post({ model: "gpt-5-mini", temperature: 0 });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toMatchObject({ param: "temperature", code: "unsupported_value" });
    expect((await post({ model: "gpt-5-mini", temperature: 1 })).status).toBe(200);
    expect((await post({ model: "o3", top_p: 0.9 })).status).toBe(400);
    expect((await post({ model: "gpt-5-chat-latest", temperature: 0 })).status).toBe(200);
  });
});

describe("a reasoning model runs the shipped task, its deviations on record", () => {
  it("OPENAI_BASE_URL=<fake> build --model openai/gpt-5.1: exit 0, temperature left out, said", async () => {
    const { fake, p } = await setup();
    const r = await p.run(["build", VC, "--model", "openai/gpt-5.1"], envAt(fake.url));
    expect(r.exitCode, r.stderr).toBe(0);
    const bodies = fake.stats.received.map((x) => x.body);
    expect(bodies.length).toBeGreaterThan(0);
    for (const body of bodies) {
      expect(body.model).toBe("gpt-5.1");
      expect(body.temperature ?? 1).toBe(1);
    }
    expect(fake.stats.faults["unsupported-value"] ?? 0).toBe(0);
    const metrics = metricsAt(p, VC_RUN);
    expect(metrics.deviations).toEqual([
      { field: "temperature", spec: 0, omitted: true, rule: "openai gpt-5.* deviate" },
    ]);
    // metrics.request stays what was sent: no temperature.
    expect(metrics.metrics.request).not.toHaveProperty("temperature");
    expect(metrics.metrics.request.reasoning_effort).toBe("none");
    expect(r.stderr).toMatch(
      new RegExp(
        "notice deviation from the spec: temperature: the spec asks 0, left out " +
          String.raw`.*rule openai gpt-5\.\* deviate`,
      ),
    );
    // A fresh build says it again (the result's own record, not the run's memory).
    const again = await p.run(["build", VC, "--model", "openai/gpt-5.1"], envAt(fake.url));
    expect(again.stderr).toMatch(/deviation from the spec: temperature/);
  });

  it("note-errors --configurations all with gpt-5-mini: each configuration's deviations", async () => {
    const { fake, p } = await setup("note-errors-plain");
    const r = await p.run(
      ["build", NE, "--model", "openai/gpt-5-mini", "--configurations", "all"],
      envAt(fake.url),
    );
    expect(r.exitCode, r.stderr).toBe(0);
    for (const { body } of fake.stats.received) {
      expect(body).not.toHaveProperty("temperature");
      expect(body).not.toHaveProperty("top_p");
      expect(body.reasoning_effort).toBe("minimal");
    }
    const metrics = metricsAt(p, "results/syn-snuh-note-errors/openai_gpt-5-mini/all");
    const rule = "openai gpt-5* deviate";
    expect(metrics.deviations).toEqual(
      expect.arrayContaining([
        {
          field: "temperature",
          spec: 0,
          omitted: true,
          rule,
          configurations: ["conservative-greedy", "neutral-greedy"],
        },
        {
          field: "temperature",
          spec: 0.7,
          omitted: true,
          rule,
          configurations: ["conservative-sample", "neutral-sample"],
        },
        {
          field: "top_p",
          spec: 0.9,
          omitted: true,
          rule,
          configurations: ["conservative-sample", "neutral-sample"],
        },
        expect.objectContaining({ field: "thinking", spec: "off", sent: { reasoning_effort: "minimal" } }),
      ]),
    );
    expect(metrics.deviations).toHaveLength(4);
  });

  it("a rule that sends the fixed value records what it sent", async () => {
    const { fake, p } = await setup();
    const shipped = parseYaml(readFileSync(`${REPO}/registry/providers.yaml`, "utf8")).routes.openai;
    shipped.request.models["gpt-5.*"].deviate = { temperature: "send_fixed" };
    p.write("routes.yaml", stringifyYaml({ routes: { openai: shipped } }));
    const r = await p.run(
      ["build", VC, "--model", "openai/gpt-5.1", "--limit", "2", "--registry", "routes.yaml"],
      envAt(fake.url),
    );
    expect(r.exitCode, r.stderr).toBe(0);
    for (const { body } of fake.stats.received) expect(body.temperature).toBe(1);
    const metrics = metricsAt(p, `${VC_RUN}.partial`);
    expect(metrics.deviations).toEqual([
      { field: "temperature", spec: 0, sent: 1, rule: "openai gpt-5.* deviate" },
    ]);
    expect(metrics.metrics.request.temperature).toBe(1);
  });

  it("a run without deviations records none", async () => {
    const { fake, p } = await setup();
    const r = await p.run(["build", VC, "--model", "openai/gpt-4.1", "--limit", "2"], envAt(fake.url));
    expect(r.exitCode, r.stderr).toBe(0);
    const metrics = metricsAt(p, "results/kor-surgical-robot-voice-command/openai_gpt-4.1.partial");
    expect(metrics).not.toHaveProperty("deviations");
    expect(r.stderr).not.toMatch(/deviation/);
  });
});

describe("check reads each run's deviations", () => {
  it("tags the run, says it under each criterion; a criterion that refuses it is incomplete", async () => {
    const { fake, p } = await setup("note-errors-plain");
    // The strong reference a gpt-5.1 here (the check block is not part of spec_hash).
    p.edit(NE, (text) =>
      text.replace(
        "strong_reference: { model: { $spec: /check/strong_reference }",
        "strong_reference: { model: openai/gpt-5.1",
      ),
    );
    const built = await p.run(["build", NE, "--model", "openai/gpt-5.1"], envAt(fake.url));
    expect(built.exitCode, built.stderr).toBe(0);
    const r = await p.run(["check", NE, "--json"], envAt(fake.url));
    const report = JSON.parse(r.stdout.trim().split("\n").pop()!);
    const strong = report.runs.find((run: { role: string }) => run.role === "strong_reference");
    expect(strong).toMatchObject({ status: "ok", model: "openai/gpt-5.1" });
    expect(strong.tags).toContain("deviating");
    expect(strong.deviations).toEqual([
      {
        field: "temperature",
        spec: 0,
        omitted: true,
        rule: "openai gpt-5.* deviate",
        configurations: ["neutral-greedy"],
      },
    ]);
    const byId = Object.fromEntries(report.criteria.map((c: { id: string }) => [c.id, c])) as Record<
      string,
      { status: string; summary: string; numbers: Record<string, unknown> }
    >;
    // separation refuses a reference at another temperature (specs/note-errors.yaml, docs/check.md).
    expect(byId.separation!.status).toBe("incomplete");
    expect(byId.separation!.summary).toMatch(
      new RegExp(
        String.raw`strong_reference \(.*\) deviates from the spec: temperature 0 in the spec, ` +
          String.raw`left out \(rule openai gpt-5\.\* deviate\).*refuse_deviations`,
      ),
    );
    // The thinking audit takes it, and says so.
    expect(byId.thinking!.summary).toMatch(/strong_reference deviates from the spec \(temperature\)/);
    const text = await p.run(["check", NE], envAt(fake.url));
    expect(text.stdout).toMatch(/notice deviation from the spec: temperature: the spec asks 0, left out/);
  });
});

describe("a spec's no_deviation refuses as before", () => {
  const strict = (fields: string) => (text: string) =>
    text.replace('      thinking: "off"\n', `      thinking: "off"\n      no_deviation: [${fields}]\n`);

  it("at the stage's temperature line, before anything is sent", async () => {
    const { fake, p } = await setup();
    p.edit(VC, strict("temperature"));
    const before = p.snapshot();
    const r = await p.run(["build", VC, "--model", "openai/gpt-5.1"], envAt(fake.url));
    expect(r.exitCode).toBe(2);
    expectCleanFailure(r.stderr);
    expect(r.stderr).toMatch(/specs\/voice-command\.yaml:\d+:\d+: stages\.model\.params\.temperature/);
    expect(r.stderr).toContain("the stage's no_deviation names temperature");
    expect(fake.stats.requests).toBe(0);
    expect(p.snapshot()).toBe(before);
  });

  it("thinking: a model that cannot switch it off is refused at the thinking line", async () => {
    const { fake, p } = await setup();
    p.edit(VC, (text) =>
      strict("thinking")(text).replace("      temperature: { $spec: /request/temperature }\n", ""),
    );
    const r = await p.run(["build", VC, "--model", "openai/gpt-5-mini"], envAt(fake.url));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(
      /stages\.model\.params\.thinking: model gpt-5-mini on route openai cannot switch/,
    );
    expect(fake.stats.requests).toBe(0);
  });

  it("a request configuration's value, named, before its first request", async () => {
    const { fake, p } = await setup("note-errors-plain");
    p.edit(NE, (text) =>
      strict("temperature")(text).replace("      temperature: { $spec: /request/temperature }\n", ""),
    );
    const r = await p.run(["build", NE, "--model", "openai/o3", "--configurations", "all"], envAt(fake.url));
    expect(r.exitCode).not.toBe(0);
    expectCleanFailure(r.stderr);
    expect(r.stderr).toMatch(
      /\(request configuration [a-z-]+\); the stage's no_deviation names temperature/,
    );
    expect(fake.stats.requests).toBe(0);
  });

  it("a misspelt field, at its file:line:column", async () => {
    const { p } = await setup();
    const stderr = await p.refuses(strict("temprature"), {
      args: ["build", VC, "--model", "openai/gpt-5.1"],
    });
    expect(stderr).toMatch(
      /voice-command\.yaml:\d+:\d+: stages\.model\.params\.no_deviation\.0: must be one of/,
    );
  });
});

describe("a rule's deviate is checked where it is written", () => {
  it.each([
    ['"gpt-5*": { deviate: omit }', /deviate but no fixed fields/],
    [
      '"gpt-5*": { fixed: { temperature: 1 }, deviate: { top_p: omit } }',
      /deviate from top_p, which its fixed/,
    ],
    [
      '"gpt-5*": { fixed: { temperature: 1 }, deviate: drop }',
      /deviate: must be one of \["omit","send_fixed"\]/,
    ],
  ])("refuses %s with its file:line:column", async (rule, named) => {
    const p = new Project();
    projects.push(p);
    p.write(
      "routes.yaml",
      "routes:\n  r:\n    base_url: http://127.0.0.1:9/v1\n    request:\n      thinking_off: {}\n" +
        `      models:\n        ${rule}\n`,
    );
    const stderr = await p.refuses(null, {
      args: ["build", VC, "--model", "r/gpt-5", "--registry", "routes.yaml"],
    });
    expect(stderr).toMatch(/routes\.yaml:7:\d+/);
    expect(stderr).toMatch(named);
  });
});

describe("the base URL from the environment", () => {
  it("goes into the request keys: another server is asked again, not answered from the memo", async () => {
    const { fake, p } = await setup();
    const other = await startFake({ policy: "voice-command" });
    servers.push(other);
    const args = ["build", VC, "--model", "openai/gpt-4.1", "--limit", "2"];
    expect((await p.run(args, envAt(fake.url))).exitCode).toBe(0);
    expect((await p.run(args, envAt(other.url))).exitCode).toBe(0);
    expect(other.stats.requests).toBe(fake.stats.requests);
    expect(other.stats.requests).toBeGreaterThan(0);
  });

  it("keeps a key in its query out of every file, and refuses a password without showing it", async () => {
    const { fake, p } = await setup();
    const secret = "gateway-secret-0123456789";
    const r = await p.run(
      ["build", VC, "--model", "openai/gpt-4.1", "--limit", "2"],
      envAt(`${fake.url}?key=${secret}`),
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.received[0]!.url).toContain(secret); // the server was sent it
    for (const dir of ["cache", "results", "medbench.lock"]) expect(grep(p, dir, secret)).toEqual([]);
    const bad = await p.run(
      ["build", VC, "--model", "openai/gpt-4.1"],
      envAt(fake.url.replace("http://", `http://user:${secret}@`)),
    );
    expect(bad.exitCode).toBe(2);
    expectCleanFailure(bad.stderr);
    expect(bad.stderr).toMatch(/\$OPENAI_BASE_URL.*carries a user name or password/);
    expect(bad.stderr).not.toContain(secret);
  });
});

describe("the shipped gemini route's base URL from GOOGLE_GEMINI_BASE_URL", () => {
  it("runs gemini-3 with its lowest thinking level on record", async () => {
    const fake = await startGeminiFake();
    const p = new Project();
    projects.push(p);
    try {
      const env = { GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: fake.url };
      const r = await p.run(["build", VC, "--model", "gemini/gemini-3-flash", "--limit", "2"], env);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(fake.stats.requests).toBeGreaterThan(0);
      const metrics = metricsAt(p, "results/kor-surgical-robot-voice-command/gemini_gemini-3-flash.partial");
      expect(metrics.deviations).toEqual([
        expect.objectContaining({ field: "thinking", spec: "off", rule: "gemini gemini-3* reasoning_low" }),
      ]);
      expect(r.stderr).toMatch(/deviation from the spec: thinking: the spec asks "off", sent/);
    } finally {
      await fake.close();
    }
  });
});

describe("the note-errors roster names references on another protocol", () => {
  it("a Gemini reference with thinking off holds; one at its lowest level is the weak one", async () => {
    const fake = await startGeminiFake({ policy: "note-errors-plain" });
    const p = new Project();
    projects.push(p);
    try {
      p.edit(NE, (text) =>
        text
          .replace(
            "strong_reference: { model: { $spec: /check/strong_reference }",
            "strong_reference: { model: gemini/gemini-2.5-flash",
          )
          .replace("model: { $spec: /check/weak_reference }", "model: gemini/gemini-3-flash"),
      );
      const env = { GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: fake.url };
      for (const model of ["gemini/gemini-2.5-flash", "gemini/gemini-3-flash"]) {
        const r = await p.run(["build", NE, "--model", model], env);
        expect(r.exitCode, r.stderr).toBe(0);
      }
      const check = await p.run(["check", NE, "--json"], env);
      const report = JSON.parse(check.stdout.trim().split("\n").pop()!);
      const role = (name: string) => report.runs.find((run: { role: string }) => run.role === name);
      // Thinking off by thinkingBudget 0, its audit holding: a thinking-off reference.
      expect(role("strong_reference")).toMatchObject({ status: "ok", deviations: [] });
      // Gemini 3 cannot turn thinking off: its lowest level, recorded, is the weak reference's "low".
      const weak = role("weak_reference");
      expect(weak.status, weak.reason).toBe("ok");
      expect(weak.tags).toEqual(expect.arrayContaining(["deviating"]));
      expect(weak.deviations).toEqual([
        expect.objectContaining({ field: "thinking", rule: "gemini gemini-3* reasoning_low" }),
      ]);
    } finally {
      await fake.close();
    }
  });
});

/** The files under `dir` of the project that contain `text`. */
function grep(p: Project, dir: string, text: string): string[] {
  const out: string[] = [];
  const walk = (path: string) => {
    if (!p.exists(path)) return;
    if (statSync(p.path(path)).isDirectory())
      for (const name of readdirSync(p.path(path))) walk(`${path}/${name}`);
    else if (readFileSync(p.path(path)).includes(text)) out.push(path);
  };
  walk(dir);
  return out;
}

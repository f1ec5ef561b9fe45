// The three shipped tasks as a protocol's build test runs them (tests/model/protocol-builds.test.ts), and
// the pinned MTSamples notes served as the upstream would serve them.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { testData } from "./helpers.js";
import { Project } from "./rig.js";
import { fakeRoute, startFake, type Fake } from "./fake.js";

export interface Task {
  spec: string;
  slug: string;
  policy: string;
  args: string[];
  /** The results folder's part after ROUTE_MODEL (note-errors: its configuration). */
  folder: string;
  /** The fake's policy fails some requests for good (note-errors): the build exits 1, incomplete. */
  incomplete: boolean;
}

export const TASKS: Task[] = [
  {
    spec: "specs/voice-command.yaml",
    slug: "kor-surgical-robot-voice-command",
    policy: "voice-command",
    args: [],
    folder: "",
    incomplete: false,
  },
  {
    spec: "specs/note-errors.yaml",
    slug: "syn-snuh-note-errors",
    policy: "note-errors",
    args: [],
    folder: "/neutral-greedy",
    incomplete: true,
  },
  {
    spec: "specs/mtsamples.yaml",
    slug: "mtsamples-replicate",
    policy: "mtsamples",
    args: ["--limit", "40"],
    folder: ".partial",
    incomplete: false,
  },
];

/** The pinned MTSamples notes served over HTTP on 127.0.0.1, as the pinned upstream would. */
export async function notesServer(): Promise<Server> {
  const notes = testData("mtsamples_processed");
  const server = createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url!, "http://x").pathname.split("/").pop()!);
    try {
      res.writeHead(200).end(readFileSync(resolve(notes, name)));
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return server;
}

/** What a protocol's build test runs against: a project whose MTSamples spec reads the served notes, and per
 *  task an OpenAI fake (route `oa-<policy>`) and the other protocol's fake (route `<prefix>-<policy>`). */
export interface ProtocolRig<F> {
  p: Project;
  openai: Fake[];
  other: F[];
  close(): Promise<void>;
}

export async function protocolRig<F extends { url: string; close(): Promise<void> }>(
  start: (policy: string) => Promise<F>,
  route: (name: string, url: string) => string,
  prefix: string,
): Promise<ProtocolRig<F>> {
  const files = await notesServer();
  const p = new Project();
  const port = (files.address() as AddressInfo).port;
  p.edit("specs/mtsamples.yaml", (text) =>
    text.replace(
      /base_url: https:\/\/raw\.githubusercontent\.com\S+/,
      `base_url: http://127.0.0.1:${port}/raw/mtsamples_processed/`,
    ),
  );
  const openai: Fake[] = [],
    other: F[] = [],
    routes: string[] = [];
  for (const task of TASKS) {
    const oa = await startFake({ policy: task.policy });
    const fake = await start(task.policy);
    openai.push(oa);
    other.push(fake);
    routes.push(fakeRoute(`oa-${task.policy}`, oa.url), route(`${prefix}-${task.policy}`, fake.url));
  }
  p.write("routes.yaml", `routes:\n${routes.join("")}`);
  const close = async () => {
    for (const server of [...openai, ...other]) await server.close();
    await new Promise<void>((done) => files.close(() => done()));
    p.remove();
  };
  return { p, openai, other, close };
}

/** A run's numbers as two protocols' runs of the same answers must share them: without the record of what
 *  was sent (`request`: each protocol's own fields), the tokens each fake counts its own way and the fields
 *  named in `dropped`, and with the route's name in place of the other's (a judge's metrics are named by its
 *  route). */
export function comparable(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- metrics.json, read field by field
  metrics: any,
  route: string,
  dropped: string[] = [],
): unknown {
  const drop = new Set(["request", "tokens", ...dropped]);
  const { metrics: values, tables, paired } = metrics;
  const json = JSON.stringify({ values, tables, paired }, (key, value) =>
    drop.has(key) ? undefined : value,
  );
  return JSON.parse(json.split(route).join("ROUTE"));
}

// The three shipped tasks as a protocol's build test runs them (tests/anthropic-build.test.ts,
// tests/gemini-build.test.ts), and the pinned MTSamples notes served as the upstream would serve them.
import { createServer, type Server } from "node:http";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { testData } from "./helpers.js";

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

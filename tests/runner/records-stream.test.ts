// Records read and written line by line (src/contract/records.ts) give the bytes and records of the whole-
// text forms (writeRecords, readRecords), across the reader's and writer's chunk boundaries.
import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  readRecords,
  RecordsWriter,
  streamRecords,
  writeRecords,
  writeRecordsFile,
  type ReplyRecord,
  type RequestRecord,
} from "../../src/contract/records.js";

const dir = mkdtempSync(join(tmpdir(), "medbench-records-stream-"));
let n = 0;
const temp = () => join(dir, `f${n++}`);
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

// Multi-byte text and lines long enough that some cross the reader's and writer's chunks on either side.
const reply = (i: number): ReplyRecord => ({
  id: `r${i}`,
  request_sha256: null,
  format: "none",
  text: `수술 로봇 ${"é".repeat(i % 7)} ${"x".repeat((i * 7919) % 40000)}`,
  error: i % 5 === 0 ? "HTTP 500: boom" : null,
  finish_reason: "stop",
  reasoning: false,
  think: false,
  usage: { z: 1, a: i },
});
const replies = Array.from({ length: 300 }, (_, i) => reply(i));

const system = `You are a careful reader. ${"Rules. ".repeat(60)}`;
const request = (i: number): RequestRecord => ({
  id: `q${i}`,
  messages: [
    { role: "system", content: system },
    { role: "user", content: `명령 ${i}` },
  ],
  schema: { name: "answer", schema: { type: "object", properties: { b: { type: "string" } } } },
  meta: { subset: i % 2 ? "a" : "b", gold: null },
});
const requests = Array.from({ length: 50 }, (_, i) => request(i));

describe("streamed records", () => {
  it("writes the bytes writeRecords returns, with their sha256", () => {
    const w = new RecordsWriter<"replies">(temp());
    for (const r of replies) w.write(r);
    const out = w.close();
    const bytes = readFileSync(out.file);
    expect(bytes.toString("utf8")).toBe(writeRecords("replies", replies));
    expect(out.sha256).toBe(sha(bytes));
    expect(readFileSync(writeRecordsFile("replies", [], temp()).file, "utf8")).toBe("");
  });

  it("writes requests with their shared table first, as writeRecords does", () => {
    const out = writeRecordsFile("requests", requests, temp());
    const text = readFileSync(out.file, "utf8");
    expect(text).toBe(writeRecords("requests", requests));
    expect(text.split("\n")[0]).toMatch(/^\{"shared":/);
  });

  it("reads back what readRecords reads, from a file and from bytes", () => {
    const file = writeRecordsFile("replies", replies, temp()).file;
    const whole = readRecords("replies", readFileSync(file, "utf8"));
    expect([...streamRecords("replies", { file })]).toEqual(whole);
    expect([...streamRecords("replies", { data: readFileSync(file) })]).toEqual(whole);
    const rq = writeRecordsFile("requests", requests, temp()).file;
    const expanded = [...streamRecords("requests", { file: rq })];
    expect(expanded).toEqual(readRecords("requests", readFileSync(rq, "utf8")));
    expect(expanded[3]!.messages[0]!.content).toBe(system);
  });

  it("refuses a request whose shared part is missing, by id", () => {
    const text = writeRecords("requests", requests).split("\n").slice(1).join("\n");
    expect(() => [...streamRecords("requests", { data: Buffer.from(text) })]).toThrow(
      /request q0: no shared part [0-9a-f]{64}/,
    );
  });
});

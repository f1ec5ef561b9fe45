#!/usr/bin/env node
// The per-request keys (src/model/openai.ts requestKey) of a built requests file, for every format a request
// can be sent in and through each route of registry/providers.yaml: tests/model/request-keys.test.ts checks
// that a change of how requests are stored leaves every key (so every cached reply) as it was. Made once by
// the code before the change, from the compiled code (npm run build first):
//   npx medbench build specs/voice-command.yaml   (in a scratch copy of the repo)
//   node scripts/reference/request-keys.mjs \
//     results/kor-surgical-robot-voice-command/medbench_prior/requests.jsonl \
//     > tests/data/request-keys/voice-command.json
// (MTSamples: its results' requests.jsonl of a --data-dir tests/data/mtsamples_processed build; note-errors,
// built with --configurations all: the prompts stage's requests object in cache/objects, named in
// medbench.lock.)
import { readFileSync } from "node:fs";
import { requestKeysOf } from "./request-keys-lib.mjs";

const [file] = process.argv.slice(2);
if (!file) throw new Error("usage: request-keys.mjs REQUESTS_FILE");
const text = readFileSync(file, "utf8");
process.stdout.write(JSON.stringify(await requestKeysOf(text), null, 1) + "\n");

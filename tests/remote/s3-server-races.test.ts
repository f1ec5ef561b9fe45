// The S3-protocol server the remote tests run against (scripts/s3-server.mjs, s3rver underneath) answers
// as S3 does while many clients write, delete and list in one folder at once, as four shards of a build
// do: s3rver's own listing (a folder read, then each name stated) and its removal of emptied folders made
// such moments a 500 InternalError, which S3 never gives for them and which failed a shard's build.
import { afterEach, describe, expect, it } from "vitest";
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { cleanUp, startS3 } from "../support/remote-rig.js";

afterEach(cleanUp);

describe("the test S3 server under concurrent writes, deletes and listings", () => {
  it("answers every request without an internal error", async () => {
    const s3 = await startS3();
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
      maxAttempts: 1, // an error is counted, not retried away
    });
    const failed: string[] = [];
    const tried = async (what: string, send: () => Promise<unknown>) => {
      try {
        await send();
      } catch (e) {
        failed.push(`${what}: ${(e as Error).name}`);
      }
    };
    // Eight writers, each putting and deleting keys in one of three folders, beside two listers.
    const writer = async (w: number) => {
      for (let i = 0; i < 60; i++) {
        const Key = `team/claims/${w % 3}/k${w}-${i % 5}`;
        await tried("put", () => client.send(new PutObjectCommand({ Bucket: "medbench", Key, Body: "x" })));
        await tried("delete", () => client.send(new DeleteObjectCommand({ Bucket: "medbench", Key })));
      }
    };
    const lister = async () => {
      for (let i = 0; i < 120; i++)
        await tried("list", () =>
          client.send(new ListObjectsV2Command({ Bucket: "medbench", Prefix: "team/" })),
        );
    };
    await Promise.all([...Array(8).keys()].map(writer).concat([lister(), lister()]));
    client.destroy();
    expect(failed).toEqual([]);
  });
});

// A disk that is really full, for the tests of what a build does on one (tests/runner/disk.test.ts,
// tests/cli/bad-input.test.ts): shell commands run in a private mount namespace (`unshare -rm`, no root
// needed where user namespaces are enabled), where a small tmpfs mounted on a project's folder makes every
// write there meet the kernel's ENOSPC.
import { execa, execaSync } from "execa";
import { expect } from "vitest";
import type { Project } from "./rig.js";

/** Whether this machine lets a process mount a tmpfs in a mount namespace of its own. */
export function namespacesWork(): boolean {
  try {
    return execaSync("unshare", ["-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"]).exitCode === 0;
  } catch {
    return false;
  }
}

/** Runs `commands`, one after the other while each succeeds, in a mount namespace of their own, in the
 *  project's folder; the commands themselves must succeed (a build's own exit goes to a file). */
export async function inMountNamespace(p: Project, commands: string[], env: Record<string, string> = {}) {
  const run = await execa("unshare", ["-rm", "sh", "-c", commands.join(" && ")], {
    cwd: p.dir,
    reject: false,
    env,
  });
  expect(run.exitCode, run.stderr).toBe(0);
}

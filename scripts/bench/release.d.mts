// Types of release.mjs for the tests that build a synthetic voice-command release with it.
export const RELEASE_FILES: string[];
export function syntheticProject(
  target: number,
  work: string,
  from?: string,
): Promise<{ dir: string; items: number }>;

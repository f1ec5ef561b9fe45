// Types of callers.mjs's export.
import type { SingleCaller } from "./measure.mjs";

export function callers(repo: string, paths: string[]): SingleCaller;

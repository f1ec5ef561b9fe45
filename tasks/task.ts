// The task contract lives with the runner (src/contract/task.ts); tasks import it from here for short paths.
export type * from "../src/contract/task.js";

/** A build that could not finish: which stage, what happened, how to fix it (exit 1, no stack trace). */
export class BuildFailure extends Error {
  constructor(
    readonly stage: string,
    message: string,
    readonly fix?: string,
  ) {
    super(message);
  }
}

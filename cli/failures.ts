/** The two errors a command throws for main() to present (cli/errors.ts): bad input, or a failure put into words. */

/** Thrown for bad command-line input: printed with a pointer to the command's help, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A failure the command has already put into words, with its exit status (no usage hint printed). */
export class CommandFailed extends Error {
  readonly exit: number;
  constructor(exit: number, message: string) {
    super(message);
    this.name = 'CommandFailed';
    this.exit = exit;
  }
}

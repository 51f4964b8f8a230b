/** The shape of one `drainbridge` subcommand. Each lives in its own file under cli/commands/. */
export interface Command {
  readonly name: string;
  /** One line for `drainbridge --help`. */
  readonly summary: string;
  /** Full usage text for `drainbridge <name> --help`. */
  readonly usage: string;
  /** Runs the command; resolves to the process exit code. */
  run(argv: readonly string[]): Promise<number>;
}

/** Thrown for bad command-line input: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

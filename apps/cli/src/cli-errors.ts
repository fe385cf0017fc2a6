/**
 * Failures the CLI reports: each becomes one line on stderr and a non-zero exit code.
 * Messages never contain the admin token or a bot token.
 */
export class CliError extends Error {
  readonly exitCode: number = 1;
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/** The command line itself is wrong: exit code 2, with a pointer to the command's help. */
export class UsageError extends CliError {
  override readonly exitCode = 2;
  constructor(
    message: string,
    readonly helpCommand = 'gi help',
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

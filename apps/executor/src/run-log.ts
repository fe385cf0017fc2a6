import type { ClaimedInvocation } from '@gi/domain';
import type { Logger } from '@gi/observability';

type Level = 'debug' | 'info' | 'warn' | 'error';
type Line = [fields: object, message: string] | [message: string];

/**
 * The log of one run, its lines carrying the invocation's fields. The child logger that adds them is
 * made for the first line written: most runs write none at the levels on, and making one costs about
 * as much as the rest of a run's bookkeeping on the executor.
 */
export class RunLog {
  private child: Logger | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly invocation: ClaimedInvocation,
  ) {}

  debug(...line: Line): void {
    this.write('debug', line);
  }

  info(...line: Line): void {
    this.write('info', line);
  }

  warn(...line: Line): void {
    this.write('warn', line);
  }

  error(...line: Line): void {
    this.write('error', line);
  }

  private write(level: Level, line: Line): void {
    if (!this.logger.isLevelEnabled(level)) return;
    const { id, botId, integrationId, pool, attempt } = this.invocation;
    this.child ??= this.logger.child({ invocationId: id, botId, integrationId, pool, attempt });
    this.child[level](...(line as [object, string]));
  }
}

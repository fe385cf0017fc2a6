import { secretRedactor } from '@gi/domain';
import type { ConnectorRunResult, LogLine, Progress, RunSecrets } from '@gi/domain';

/**
 * What a run hands back with its secrets' values replaced by `[secret]` (domain `secretRedactor`):
 * log lines (streamed and in the result), the RaiseError title and message, a failure's message and
 * progress messages. Applied on the host side, as the run's words leave the runtime, whether it ran on
 * a worker thread or in process. The ResponseBody is the connector's answer and is left as written.
 */
export class SecretRedaction {
  private readonly redact: (text: string) => string;

  constructor(secrets: RunSecrets | undefined) {
    this.redact = secretRedactor(secrets);
  }

  lines = (lines: LogLine[]): LogLine[] => lines.map((line) => ({ ...line, message: this.redact(line.message) }));

  progress = (progress: Progress): Progress => (progress.message === undefined ? progress : { ...progress, message: this.redact(progress.message) });

  result(result: ConnectorRunResult): ConnectorRunResult {
    const logs = this.lines(result.logs);
    switch (result.kind) {
      case 'ok':
        return { ...result, logs };
      case 'raised':
        return { ...result, title: this.redact(result.title), message: this.redact(result.message), logs };
      case 'failed':
        return { ...result, message: this.redact(result.message), logs };
    }
  }
}

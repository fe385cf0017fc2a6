import { SecretFilter } from '@gi/domain';
import type { ConnectorRunResult, DurableRun, LogLine, Progress, RunSecrets } from '@gi/domain';
import { RUN_BUDGET } from './run-budget';

/** Characters the sandbox keeps of a step error's name (its message: as a thrown error's, RUN_BUDGET.errorMessageChars). */
const STEP_ERROR_NAME_CHARS = 100;

/**
 * What a run hands back with its secrets' values replaced by `[secret]` (domain `SecretFilter`):
 * log lines (streamed and in the result), the RaiseError title and message, a failure's message and
 * progress messages. The run redacts them itself before it cuts them to its budget (GuestValues,
 * LogBuffer); this is the host side's net as the run's words leave the runtime, whether it ran on a
 * worker thread or in process, for any text the run did not. The ResponseBody is the connector's
 * answer and is left as written. A run without secrets to redact (most runs) has what it hands back
 * passed on as it is, uncopied.
 */
export class SecretRedaction {
  private readonly filter: SecretFilter;
  private readonly redact: (text: string) => string;
  private readonly redacts: boolean;

  constructor(secrets: RunSecrets | undefined) {
    const filter = (this.filter = new SecretFilter(secrets));
    this.redact = (text) => filter.redact(text);
    this.redacts = filter.redacts;
  }

  /** A text the sandbox cut at `max` characters (a step error's), redacted; at the limit, a cut end that begins a secret is dropped too. */
  private redactCut(text: string, max: number): string {
    const redacted = this.filter.redact(text);
    return text.length >= max ? this.filter.dropSecretStart(redacted) : redacted;
  }

  lines(lines: LogLine[]): LogLine[] {
    return this.redacts ? lines.map((line) => ({ ...line, message: this.redact(line.message) })) : lines;
  }

  progress(progress: Progress): Progress {
    return !this.redacts || progress.message === undefined ? progress : { ...progress, message: this.redact(progress.message) };
  }

  /** `listener` given progress redacted: itself when there is nothing to redact. */
  progressTo(listener: ((progress: Progress) => void) | undefined): ((progress: Progress) => void) | undefined {
    return listener && this.redacts ? (progress) => listener(this.progress(progress)) : listener;
  }

  /** `listener` given log lines redacted: itself when there is nothing to redact. */
  linesTo(listener: ((lines: LogLine[]) => void) | undefined): ((lines: LogLine[]) => void) | undefined {
    return listener && this.redacts ? (lines) => listener(this.lines(lines)) : listener;
  }

  /** `durable` with the errors of its steps redacted as they are journalled: itself when there is nothing to redact. */
  durableRun(durable: DurableRun): DurableRun {
    if (!this.redacts) return durable;
    const { botId, invocationId, journal, limits, suspendAfterMs } = durable;
    return {
      botId,
      invocationId,
      journal,
      limits,
      suspendAfterMs,
      // The sandbox cut the error's name and message (libs/sandbox/guest/durable.ts) before they got here.
      record: (step) =>
        durable.record(
          step.status === 'done' ? step : { ...step, error: { name: this.redactCut(step.error.name, STEP_ERROR_NAME_CHARS), message: this.redactCut(step.error.message, RUN_BUDGET.errorMessageChars) } },
        ),
      beginWait: (wait) => durable.beginWait(wait),
      timeOut: (step) => durable.timeOut(step),
    };
  }

  /** The run's result as it leaves the runtime. */
  result(result: ConnectorRunResult): ConnectorRunResult {
    if (!this.redacts) return result;
    const logs = this.lines(result.logs);
    switch (result.kind) {
      case 'ok':
        return { ...result, logs };
      case 'raised':
        return { ...result, title: this.redact(result.title), message: this.redact(result.message), logs };
      case 'failed':
        return { ...result, message: this.redact(result.message), logs };
      case 'suspended':
        return { ...result, logs };
    }
  }
}

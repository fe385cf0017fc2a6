import type { RunLimits } from '../catalog';
import type { VerifiedInbound } from '../inbound-auth';
import type { LogLine, Progress } from '../invocation';
import type { JournalEntry, JournalLimits, StepRecord, WaitReason, WaitRecord } from '../journal';
import type { WebhookEntity } from '../request-entity';
import type { RunSecrets } from '../secrets';
import type { TraceContext } from '../trace-context';
import type { ByteRange } from './file-store';
import type { RunCancellation } from './run-cancellation';

/** Reads a file of the running invocation for its connector; rejects with a message meant for the connector. */
export type ConnectorFileReader = (id: string, range: ByteRange) => Promise<Uint8Array>;

/**
 * The journal of a live durable run (`Context.Step`, `Context.Sleep`, `Context.WaitForEvent`): the
 * entries to answer finished steps from, and where new ones are written. Each write resolves with the
 * entry as stored once it is durable, and rejects with a message when it cannot be made: a limit
 * passed (the step fails with that message), or the lease lost (the run is stopped anyway).
 */
export interface DurableRun {
  /** The invocation: each step's idempotency key is derived from it, its name and its occurrence. */
  botId: string;
  invocationId: string;
  /** The journal as the run starts, in the order written. */
  journal: JournalEntry[];
  limits: JournalLimits;
  /**
   * A sleep or retry delay with more than this left (ms) suspends the run; a shorter one waits in the
   * sandbox. An event wait not yet answered always suspends: an event can only reach a suspended run.
   */
  suspendAfterMs: number;
  record(step: StepRecord): Promise<JournalEntry>;
  beginWait(wait: WaitRecord): Promise<JournalEntry>;
  timeOut(step: Pick<JournalEntry, 'name' | 'occurrence'>): Promise<JournalEntry>;
}

export interface ConnectorRunRequest {
  /** Identifies the code for the compiled-code cache, e.g. `bot/integration@version`. */
  cacheKey: string;
  code: string;
  /** `Context.GetRequestEntity()`: the entity, or null for none; or instead `entityJson`. */
  entity?: WebhookEntity | null;
  /** The entity as JSON text (a live run's, as the store holds it): parsed only inside the sandbox. */
  entityJson?: string;
  /** `Context.GetRawRequestBody()`: the body as the caller sent it; null (or absent) when there is none. */
  rawBody?: string | null;
  /** `Context.InboundAuth`: what the gateway verified of the call; null (or absent) for a call made with a bot token. */
  inbound?: VerifiedInbound | null;
  /**
   * `Context.Secrets`: the run's secrets by name, in clear. Their values (of at least
   * MIN_REDACTED_SECRET_LENGTH characters) never leave the run in a log line, an error or a progress message.
   */
  secrets?: RunSecrets;
  timeoutMs: number;
  /** The run's other limits; any left out take the runtime's defaults. */
  limits?: Partial<RunLimits>;
  allowedHosts: string[];
  /** When set, every HTTP request of the run (`Context.Http`, `fetch`) fails with this message and nothing is sent (a replay with outbound HTTP blocked). */
  blockedHttp?: string;
  onProgress?: (progress: Progress) => void;
  /**
   * Takes the run's log lines while it runs, in small batches (about twice a second at most). Lines
   * handed here are left out of the result's `logs`; a run that ends before its first batch is due
   * hands none. Without it every line comes with the result.
   */
  onLogs?: (lines: LogLine[]) => void;
  /**
   * A live durable run's journal. Without it (a replay, a local run) steps run and are kept in memory
   * for the run alone, and nothing suspends: sleeps wait in the sandbox, or are skipped (`sleeps`).
   */
  durable?: DurableRun;
  /** Without `durable`: `skip` ends every sleep and event wait at once (replays; `gi connector run --skip-sleeps`). Default `wait`. */
  sleeps?: 'wait' | 'skip';
  /** Without `durable`: the events `Context.WaitForEvent` receives, in order per name (`gi connector run --event`). */
  events?: Array<{ name: string; payload: unknown }>;
  /** `Context.ReadFile`: only the files of this run's own request; absent when it has none. */
  readFile?: ConnectorFileReader;
  /** Requesting it stops the run at once (the invocation was cancelled); the result is then `cancelled`. */
  cancel?: RunCancellation;
  /**
   * The run's W3C trace context (tracing on): every HTTP request the connector makes carries it as the
   * `traceparent` and `tracestate` headers. Never shown to the connector.
   */
  trace?: TraceContext;
}

/** A run's result; its `logs` are the lines not handed to `onLogs` while it ran. */
export type ConnectorRunResult =
  | { kind: 'ok'; responseBody: unknown; logs: LogLine[]; durationMs: number }
  | { kind: 'raised'; title: string; message: string; logs: LogLine[]; durationMs: number }
  | { kind: 'failed'; reason: 'threw' | 'timeout' | 'limit' | 'cancelled'; message: string; logs: LogLine[]; durationMs: number }
  /** A durable run that stopped to wait (a long sleep, retry delay or event wait): it resumes from its journal once woken. */
  | { kind: 'suspended'; wait: WaitReason; logs: LogLine[]; durationMs: number };

export type CompileResult = { ok: true } | { ok: false; message: string; line: number; column: number };

export interface ConnectorRuntime {
  /** Checks that the code compiles, without running it. */
  compile(code: string): CompileResult;
  run(request: ConnectorRunRequest): Promise<ConnectorRunResult>;
  close(): Promise<void>;
}

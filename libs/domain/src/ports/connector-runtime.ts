import type { RunLimits } from '../catalog';
import type { LogLine, Progress } from '../invocation';
import type { WebhookEntity } from '../request-entity';
import type { RunSecrets } from '../secrets';
import type { TraceContext } from '../trace-context';
import type { ByteRange } from './file-store';
import type { RunCancellation } from './run-cancellation';

/** Reads a file of the running invocation for its connector; rejects with a message meant for the connector. */
export type ConnectorFileReader = (id: string, range: ByteRange) => Promise<Uint8Array>;

export interface ConnectorRunRequest {
  /** Identifies the code for the compiled-code cache, e.g. `bot/integration@version`. */
  cacheKey: string;
  /**
   * Whose run it is (a bot): runs waiting for a sandbox thread are taken in turns between tenants, and
   * one tenant holds at most its share of the threads' runs at once. Runs without one share one turn.
   */
  tenant?: string;
  code: string;
  /** `Context.GetRequestEntity()`: the entity, or null for none; or instead `entityJson`. */
  entity?: WebhookEntity | null;
  /** The entity as JSON text (a live run's, as the store holds it): parsed only inside the sandbox. */
  entityJson?: string;
  /** `Context.GetRawRequestBody()`: the body as the caller sent it; null (or absent) when there is none. */
  rawBody?: string | null;
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
  | { kind: 'failed'; reason: 'threw' | 'timeout' | 'limit' | 'cancelled'; message: string; logs: LogLine[]; durationMs: number };

export type CompileResult = { ok: true } | { ok: false; message: string; line: number; column: number };

export interface ConnectorRuntime {
  /** Checks that the code compiles, without running it. */
  compile(code: string): CompileResult;
  run(request: ConnectorRunRequest): Promise<ConnectorRunResult>;
  close(): Promise<void>;
}

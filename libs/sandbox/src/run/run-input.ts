import type { webcrypto } from 'node:crypto';
import type { ConnectorFileReader, DurableRun, LogLine, Progress, RunCancellation, RunLimits, RunSecrets, TraceContext, VerifiedInbound } from '@gi/domain';
import type { LocalEvent } from '../durable/memory-journal';

/** Makes a key or a key pair: `crypto.subtle.generateKey` with its arguments checked. */
export type KeyGenerator = (algorithm: unknown, extractable: boolean, usages: webcrypto.KeyUsage[]) => Promise<webcrypto.CryptoKey | webcrypto.CryptoKeyPair>;

/** What one run needs: the request with its limits resolved. */
export interface RunInput {
  /** Identifies the code (an integration version): sandboxes are prepared with it compiled. */
  cacheKey: string;
  /** Whose run it is (ConnectorRunRequest.tenant): the worker pool takes waiting runs in turns between tenants. */
  tenant?: string;
  code: string;
  /**
   * The request entity as JSON text (`null` when there is none). Text, not a structured value: it
   * reaches a worker thread without a structured clone (which recursion limits, whatever the data
   * nests), and becomes JSON inside the sandbox anyway.
   */
  entityJson: string;
  /** The request body as the caller sent it (`Context.GetRawRequestBody()`); null when there is none. Text, like the entity. */
  rawBody: string | null;
  /** `Context.InboundAuth`: what the gateway verified of the call; null (or absent) for a call made with a bot token. */
  inbound?: VerifiedInbound | null;
  /** `Context.Secrets`, by name; the runtime redacts their values from what the run hands back. */
  secrets?: RunSecrets;
  timeoutMs: number;
  limits: RunLimits;
  allowedHosts: readonly string[];
  /** Every HTTP request fails with this message when set (ConnectorRunRequest.blockedHttp). */
  blockedHttp?: string;
  /** Sent on the connector's HTTP requests (ConnectorRunRequest.trace); the sandbox never sees it. */
  trace?: TraceContext;
  onProgress?: (progress: Progress) => void;
  /** Takes the lines logged while the run goes on, in batches (RUN_BUDGET.logBatchMs, logBatchLines); the result has the rest. */
  onLogs?: (lines: LogLine[]) => void;
  readFile?: ConnectorFileReader;
  /** The live journal of a durable run (ConnectorRunRequest.durable); on a worker, its writes travel to the pool's thread. */
  durable?: DurableRun;
  /** Without `durable`: `skip` ends every sleep, retry delay and event wait at once (ConnectorRunRequest.sleeps). */
  sleeps?: 'wait' | 'skip';
  /** Without `durable`: the events Context.WaitForEvent receives, payloads as JSON text (ConnectorRunRequest.events). */
  events?: LocalEvent[];
  /** Makes the keys of `crypto.subtle.generateKey` on another thread (a worker's pool); without it, on the run's own. */
  generateKey?: KeyGenerator;
  /** Stops the run when requested; the result is then `cancelled`. */
  cancel?: RunCancellation;
  /**
   * Called once, from the engine's interrupt checks, when the run has gone on for LONG_RUN_MS: a
   * worker then posts the results it held back for the runs before this one.
   */
  onLong?: () => void;
  /**
   * Called when the run waits on host work (its thread is free meanwhile); not while it only waits
   * for its sandbox to be made, as it computes on its thread right after.
   */
  onWaitsOnHost?: () => void;
}

/** How long a run goes on before `RunInput.onLong` is called. */
export const LONG_RUN_MS = 1;

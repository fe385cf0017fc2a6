import type { ConnectorFileReader, Progress } from '@gi/domain';
import type { RunCancellation } from './run-cancellation';

/** What one run needs: the request without its cache key (the engine has no use for it). */
export interface RunInput {
  code: string;
  entity: unknown;
  timeoutMs: number;
  allowedHosts: readonly string[];
  onProgress?: (progress: Progress) => void;
  readFile?: ConnectorFileReader;
  /** Stops the run when requested; the result is then `cancelled`. */
  cancel?: RunCancellation;
}

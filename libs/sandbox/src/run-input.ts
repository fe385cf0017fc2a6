import type { ConnectorFileReader, Progress, RunLimits } from '@gi/domain';
import type { RunCancellation } from './run-cancellation';

/** What one run needs: the request with its limits resolved. */
export interface RunInput {
  /** Identifies the code (an integration version): sandboxes are prepared with it compiled. */
  cacheKey: string;
  code: string;
  entity: unknown;
  timeoutMs: number;
  limits: RunLimits;
  allowedHosts: readonly string[];
  onProgress?: (progress: Progress) => void;
  readFile?: ConnectorFileReader;
  /** Stops the run when requested; the result is then `cancelled`. */
  cancel?: RunCancellation;
}

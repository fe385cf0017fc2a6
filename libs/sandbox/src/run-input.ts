import type { ConnectorFileReader, Progress, RunLimits } from '@gi/domain';

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
}

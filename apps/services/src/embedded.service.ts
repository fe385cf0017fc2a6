import cluster from 'node:cluster';
import { parseServiceConfig, processEnvironment } from '@gi/config';
import { runEmbeddedPrimary } from './embedded-primary';
import { runEmbeddedProcess } from './embedded-process';
import { embeddedWorkerRole } from './embedded-roles';
import { embeddedProcessCount } from './embedded-shares';

/**
 * The embedded deployment (`gi up`, `npm start`): gateway, results, control and an executor pool on one
 * port, with the SQLite store under DATA_DIR and the in-process bus. With `processes` above 1 (the
 * default on a machine of several cores) a primary (embedded-primary.ts) runs that many such processes
 * (embedded-process.ts), telling each its role (embedded-roles.ts).
 */
export async function runEmbedded(options: { processes?: number } = {}): Promise<void> {
  if (cluster.isWorker) return runEmbeddedProcess(embeddedWorkerRole(processEnvironment()));
  const processes = embeddedProcessCount(options.processes, parseServiceConfig(processEnvironment()));
  if (processes === 1) return runEmbeddedProcess({ kind: 'sole' });
  return runEmbeddedPrimary(processes);
}

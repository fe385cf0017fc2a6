import type { Worker } from 'node:cluster';
import { unavailable } from '@gi/domain';
import { clusterMetrics } from '@gi/observability';

/** How long a process waits for the primary to gather the metrics (prom-client gives each process 5 s). */
export const METRICS_WAIT_MS = 6_000;

/** The IPC channel of a cluster worker (`process`), or a stand-in in tests. */
export interface MetricsChannel {
  send(message: MetricsRequest, callback: (error: Error | null) => void): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

/** A process asks the primary for the metrics of every process of the cluster. */
export interface MetricsRequest {
  kind: 'gi:metrics-request';
  id: number;
}

/** The primary's answer: the exposition, or why there is none. */
interface MetricsReply {
  kind: 'gi:metrics';
  id: number;
  text?: string;
  error?: string;
}

const isMetricsRequest = (message: unknown): message is MetricsRequest =>
  typeof message === 'object' && message !== null && (message as MetricsRequest).kind === 'gi:metrics-request' && typeof (message as MetricsRequest).id === 'number';

const isMetricsReply = (message: unknown): message is MetricsReply =>
  typeof message === 'object' && message !== null && (message as MetricsReply).kind === 'gi:metrics' && typeof (message as MetricsReply).id === 'number';

/**
 * In a process of an embedded cluster: `/metrics` answers the metrics of every process, which the
 * primary gathers (a scrape reaches whichever process the connection was handed to, so one process's
 * own figures would jump from scrape to scrape).
 */
export function metricsFromPrimary(channel: MetricsChannel, waitMs = METRICS_WAIT_MS): () => Promise<string> {
  let next = 0;
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  const refused = (why: string) => unavailable(`The metrics of the embedded processes could not be gathered (${why}); try the scrape again.`, 1);
  channel.on('message', (message) => {
    if (!isMetricsReply(message)) return;
    const asked = pending.get(message.id);
    if (!asked) return;
    pending.delete(message.id);
    clearTimeout(asked.timer);
    if (message.text !== undefined) asked.resolve(message.text);
    else asked.reject(refused(message.error ?? 'no answer'));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(refused(`no answer within ${waitMs / 1000} s`));
      }, waitMs);
      pending.set(id, { resolve, reject, timer });
      channel.send({ kind: 'gi:metrics-request', id }, (error) => {
        if (!error || !pending.delete(id)) return;
        clearTimeout(timer);
        reject(refused(error.message));
      });
    });
}

/** In the primary: answers each process's requests with the metrics of all of them. */
export function answerMetricsRequests(): (worker: Pick<Worker, 'send' | 'isConnected'>, message: unknown) => boolean {
  const gather = clusterMetrics();
  return (worker, message) => {
    if (!isMetricsRequest(message)) return false;
    const reply = (answer: Omit<MetricsReply, 'kind' | 'id'>) => worker.isConnected() && worker.send({ kind: 'gi:metrics', id: message.id, ...answer } satisfies MetricsReply, () => undefined);
    gather().then(
      (text) => reply({ text }),
      (error: Error) => reply({ error: error.message }),
    );
    return true;
  };
}

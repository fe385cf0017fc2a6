import { EventEmitter } from 'node:events';
import { GiError } from '@gi/domain';
import { metricsFromPrimary } from './cluster-metrics';
import type { MetricsRequest } from './cluster-metrics';

/** A process's IPC channel whose primary answers with `answer` (or not at all when it returns undefined). */
function channel(answer: (request: MetricsRequest) => Record<string, unknown> | undefined) {
  const emitter = new EventEmitter();
  return {
    on: (event: 'message', listener: (message: unknown) => void) => emitter.on(event, listener),
    send: (request: MetricsRequest, callback: (error: Error | null) => void) => {
      callback(null);
      const reply = answer(request);
      if (reply) setImmediate(() => emitter.emit('message', { kind: 'gi:metrics', id: request.id, ...reply }));
    },
  };
}

describe('metrics of an embedded cluster, asked of the primary', () => {
  it('answers what the primary gathered, each request its own answer', async () => {
    const metrics = metricsFromPrimary(channel((request) => ({ text: `# request ${request.id}` })));
    expect(await Promise.all([metrics(), metrics()])).toEqual(['# request 0', '# request 1']);
  });

  it('refuses with 503 when the primary could not gather them, or does not answer in time', async () => {
    const failed = metricsFromPrimary(channel(() => ({ error: 'Operation timed out.' })));
    await expect(failed()).rejects.toMatchObject({ code: 'unavailable', detail: expect.stringContaining('Operation timed out.') });
    const silent = metricsFromPrimary(channel(() => undefined), 20);
    const refused = await silent().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(GiError);
    expect(refused).toMatchObject({ code: 'unavailable', detail: expect.stringContaining('no answer within') });
  });
});

import { readinessOf } from './readiness';

describe('readinessOf', () => {
  it('is ready when every check says ok, and names each verdict', async () => {
    const ready = readinessOf({ store: async () => 'ok', broker: async () => 'ok' });
    expect(await ready()).toEqual({ ready: true, checks: { store: 'ok', broker: 'ok' } });
  });

  it('is not ready when one check reports a problem or throws, and never shows what was thrown', async () => {
    const ready = readinessOf({
      store: async () => 'ok',
      storeWrites: async () => 'refusing writes',
      broker: async () => {
        throw new Error('connect ECONNREFUSED 10.0.0.7:5672 (amqp://gi:secret@broker)');
      },
    });
    const answer = await ready();
    expect(answer).toEqual({ ready: false, checks: { store: 'ok', storeWrites: 'refusing writes', broker: 'check failed' } });
    expect(JSON.stringify(answer)).not.toContain('secret');
  });

  it('covers nothing, and is always ready, without checks', async () => {
    expect(await readinessOf({})()).toEqual({ ready: true, checks: {} });
  });
});

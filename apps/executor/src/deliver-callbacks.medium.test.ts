import pino from 'pino';
import { signatureOf } from '@gi/auth';
import type { CallbackResult, CallbackSender, Outcome, Store } from '@gi/domain';
import { CALLBACK_PER_BOT, CallbackDispatcher } from './deliver-callbacks';
import type { CallbackSettings } from './deliver-callbacks';
import { createMetrics } from '@gi/observability';
import { createSqliteStore } from '@gi/store-sqlite';
import { newInvocation, ManualClock } from '@gi/testing';

const URL = 'https://hooks.example.com/gi';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

interface Sent {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** A receiver whose answers the test scripts, one per POST (the last repeats). */
class ScriptedSender implements CallbackSender {
  readonly sent: Sent[] = [];
  constructor(private readonly answers: CallbackResult[] = [{ kind: 'answered', status: 200 }]) {}
  async post(url: string, headers: Record<string, string>, body: string): Promise<CallbackResult> {
    this.sent.push({ url, headers, body });
    return this.answers[Math.min(this.sent.length - 1, this.answers.length - 1)];
  }
}

describe('CallbackDispatcher (SQLite store)', () => {
  let store: Store;
  let clock: ManualClock;
  const settings: CallbackSettings = { maxAttempts: 3, retryBaseMs: 1000, leaseMs: 30_000 };
  const dispatcher = (sender: CallbackSender, s: CallbackSettings = settings) =>
    new CallbackDispatcher({ store, sender, clock, logger: pino({ level: 'silent' }), metrics: createMetrics(), settings: s, random: () => 1 });

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 0, 1));
    store = createSqliteStore(':memory:', clock);
    await store.catalog.rotateSigningSecret('bot-a', { secret: SECRET, createdAt: clock.now(), expiresAt: null }, clock.now());
  });
  afterEach(() => store.close());

  /** An invocation with a callback, finished with `outcome`. */
  async function finished(outcome: Outcome, overrides: Parameters<typeof newInvocation>[0] = { createdAt: clock.now() }) {
    const inv = newInvocation({ callbackUrl: URL, ...overrides });
    await store.invocations.create(inv);
    await store.invocations.claim(inv, 'w', 60_000, clock.now());
    if (outcome.status === 'Cancelled') await store.invocations.cancel(inv, outcome.error, clock.now());
    else await store.invocations.complete(inv, 'w', outcome, [], clock.now());
    return inv;
  }

  it('POSTs the outcome signed with the bot\'s secret, once', async () => {
    const inv = await finished({ status: 'Completed', responseBody: { Status: 'Accepted' } });
    const sender = new ScriptedSender();
    const callbacks = dispatcher(sender);
    await callbacks.drain();
    await callbacks.drain();
    expect(sender.sent).toHaveLength(1);
    const [{ url, headers, body }] = sender.sent;
    expect(url).toBe(URL);
    const timestamp = Math.floor(clock.now() / 1000);
    expect(headers).toEqual({
      'content-type': 'application/json',
      'user-agent': 'generic-integration-callbacks/1',
      'webhook-id': inv.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureOf(SECRET, inv.id, timestamp, body),
    });
    expect(JSON.parse(body)).toEqual({
      type: 'invocation.completed',
      timestamp: new Date(clock.now()).toISOString(),
      data: {
        invocationId: inv.id,
        status: 'Completed',
        botId: 'bot-a',
        entityName: 'Order',
        integrationId: 'ack',
        contentType: 'application/json; charset=utf-8',
        body: { Status: 'Accepted' },
      },
    });
    expect((await store.invocations.get(inv))?.callback).toMatchObject({ state: 'delivered', attempts: 1, deliveredAt: clock.now(), lastError: null });
  });

  it('carries the problem a poll answers for a failed or cancelled invocation, and a text body as text', async () => {
    const failed = await finished({ status: 'Failed', error: { code: 'connector_error', title: 'Order rejected', detail: 'no lines' } });
    const cancelled = await finished({ status: 'Cancelled', error: { code: 'cancelled', title: 'Invocation cancelled', detail: 'by its caller' } });
    const text = await finished({ status: 'Completed', responseBody: 'OK' }, { createdAt: clock.now(), responseContentType: 'text/plain' });
    const sender = new ScriptedSender();
    await dispatcher(sender).drain();
    const data = (id: string) => JSON.parse(sender.sent.find((s) => s.headers['webhook-id'] === id)?.body ?? 'null');
    expect(data(failed.id)).toMatchObject({
      type: 'invocation.failed',
      data: { status: 'Failed', problem: { type: 'urn:gi:problem:connector-error', title: 'Order rejected', status: 422, detail: 'no lines', invocationId: failed.id } },
    });
    expect(data(cancelled.id)).toMatchObject({ type: 'invocation.cancelled', data: { status: 'Cancelled', problem: { status: 410, type: 'urn:gi:problem:cancelled' } } });
    expect(data(text.id).data).toMatchObject({ contentType: 'text/plain; charset=utf-8', body: 'OK' });
  });

  it('retries a failing receiver with growing waits until it takes the callback', async () => {
    const inv = await finished({ status: 'Completed', responseBody: 1 });
    const sender = new ScriptedSender([
      { kind: 'answered', status: 500 },
      { kind: 'unreachable', reason: 'No answer within 10000 ms.' },
      { kind: 'answered', status: 204 },
    ]);
    const callbacks = dispatcher(sender);
    await callbacks.drain();
    expect((await store.invocations.get(inv))?.callback).toMatchObject({ state: 'pending', attempts: 1, lastError: 'The receiver answered 500.', nextAttemptAt: clock.now() + 1000 });
    clock.advance(999);
    await callbacks.drain();
    expect(sender.sent).toHaveLength(1);
    clock.advance(1);
    await callbacks.drain();
    expect((await store.invocations.get(inv))?.callback).toMatchObject({ attempts: 2, lastError: 'No answer within 10000 ms.', nextAttemptAt: clock.now() + 4000 });
    clock.advance(4000);
    await callbacks.drain();
    expect(sender.sent).toHaveLength(3);
    expect((await store.invocations.get(inv))?.callback).toMatchObject({ state: 'delivered', attempts: 3, lastError: null });
    // Every attempt is the same message, signed anew.
    expect(new Set(sender.sent.map((s) => s.headers['webhook-id']))).toEqual(new Set([inv.id]));
    await callbacks.stop();
  });

  it('gives up after the last attempt, and at once on a refused destination or without a secret', async () => {
    const failing = await finished({ status: 'Completed', responseBody: 1 });
    const sender = new ScriptedSender([{ kind: 'answered', status: 503 }]);
    const callbacks = dispatcher(sender);
    for (let i = 0; i < 5; i++) {
      await callbacks.drain();
      clock.advance(60_000);
    }
    expect(sender.sent).toHaveLength(3);
    expect((await store.invocations.get(failing))?.callback).toMatchObject({ state: 'failed', attempts: 3, lastError: 'The receiver answered 503.', nextAttemptAt: null });

    const refused = await finished({ status: 'Completed', responseBody: 1 });
    const guard = new ScriptedSender([{ kind: 'refused', reason: 'The address 10.0.0.1 is private, loopback or link-local and cannot be requested.' }]);
    await dispatcher(guard).drain();
    expect((await store.invocations.get(refused))?.callback).toMatchObject({ state: 'failed', attempts: 1, lastError: expect.stringContaining('10.0.0.1 is private') });

    const unsigned = await finished({ status: 'Completed', responseBody: 1 }, { createdAt: clock.now(), botId: 'bot-without-secret' });
    const nobody = new ScriptedSender();
    await dispatcher(nobody).drain();
    expect(nobody.sent).toHaveLength(0);
    expect((await store.invocations.get(unsigned))?.callback).toMatchObject({ state: 'failed', lastError: 'The bot has no signing secret, so the callback cannot be signed.' });
  });

  it('signs with the previous secret too while a rotation overlaps', async () => {
    await store.catalog.rotateSigningSecret('bot-a', { secret: 'whsec_bmV3LXNlY3JldA==', createdAt: clock.now() + 1, expiresAt: null }, clock.now() + 60_000);
    const inv = await finished({ status: 'Completed', responseBody: 1 });
    const sender = new ScriptedSender();
    await dispatcher(sender).drain();
    const [{ headers, body }] = sender.sent;
    const timestamp = Number(headers['webhook-timestamp']);
    expect(headers['webhook-signature']).toBe(`${signatureOf('whsec_bmV3LXNlY3JldA==', inv.id, timestamp, body)} ${signatureOf(SECRET, inv.id, timestamp, body)}`);
  });

  it('leaves running invocations alone, and two senders never deliver the same callback', async () => {
    const running = newInvocation({ createdAt: clock.now(), callbackUrl: URL });
    await store.invocations.create(running);
    const done = await Promise.all(Array.from({ length: 20 }, () => finished({ status: 'Completed', responseBody: 1 })));
    const sender = new ScriptedSender();
    await Promise.all([dispatcher(sender).drain(), dispatcher(sender).drain()]);
    expect(sender.sent.map((s) => s.headers['webhook-id']).sort()).toEqual(done.map((d) => d.id).sort());
  });

  it("holds a bot whose receiver never answers to its share of the POSTs, and sends another bot's callback beside them at once", async () => {
    const tarpit = 'https://tarpit.example.com/gi';
    await store.catalog.rotateSigningSecret('bot-b', { secret: SECRET, createdAt: clock.now(), expiresAt: null }, clock.now());
    for (let i = 0; i < 40; i++) await finished({ status: 'Completed', responseBody: i }, { createdAt: clock.now(), callbackUrl: tarpit });
    const other = await finished({ status: 'Completed', responseBody: 'b' }, { createdAt: clock.now(), botId: 'bot-b' });
    // The tarpit holds each POST until the test lets go; every other receiver answers 200 at once.
    const held: Array<() => void> = [];
    const sent: string[] = [];
    const sender: CallbackSender = {
      post: (url, headers) => {
        sent.push(headers['webhook-id']);
        if (url !== tarpit) return Promise.resolve({ kind: 'answered', status: 200 });
        return new Promise((resolve) => held.push(() => resolve({ kind: 'answered', status: 200 })));
      },
    };
    const callbacks = dispatcher(sender);
    callbacks.kick();
    while ((await store.invocations.get(other))?.callback?.state !== 'delivered') await new Promise((resolve) => setTimeout(resolve, 5));
    // Four of the tarpit's at most, and B's went out beside them, not after forty of them.
    expect(held).toHaveLength(CALLBACK_PER_BOT);
    expect(sent.indexOf(other.id)).toBeLessThanOrEqual(CALLBACK_PER_BOT);
    const draining = callbacks.drain();
    while (sent.length < 41) {
      for (const release of held.splice(0)) release();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    for (const release of held.splice(0)) release();
    await draining;
    expect(new Set(sent).size).toBe(41);
  });
});

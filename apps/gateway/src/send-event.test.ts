import fc from 'fast-check';
import { Writable } from 'node:stream';
import { DEFAULT_JOURNAL_LIMITS, GiError, JournalLimitExceeded } from '@gi/domain';
import type { JobMessage } from '@gi/contracts';
import type { EventDelivery, InvocationRef, InvocationState, JournalLimits } from '@gi/domain';
import { createLogger } from '@gi/observability';
import { newInvocation, SmallServices } from '@gi/testing';
import type { GatewayDeps } from './gateway.deps';
import { gatewayRouter } from './gateway.router';
import { sendEvent } from './send-event';

const HOUR = 3600_000;
const EVENT = '/api/Platform/bot-a/GenericIntegrationEvent';

/**
 * POST .../GenericIntegrationEvent through the gateway router over in-memory ports: every answer
 * docs/openapi.yaml lists for it, each with its problem.
 */
async function gateway(options: { limits?: Partial<JournalLimits>; platformVersion?: [number, number] } = {}) {
  const world = new SmallServices();
  const { token } = await world.bot();
  const other = await world.bot('bot-b');
  const jobs: JobMessage[] = [];
  await world.bus.consume('default', 4, async (job) => {
    jobs.push(job);
    return 'ack';
  });
  const deps: GatewayDeps = {
    store: world.store,
    bus: world.bus,
    tokens: world.tokens,
    waiter: world.waiter,
    clock: world.clock,
    logger: world.logger,
    settings: {
      platformSegment: 'Platform',
      platformVersion: options.platformVersion ?? [9, 19],
      syncTimeoutMs: 5_000,
      maxBodyBytes: 1024 * 1024,
      bodyTimeouts: { idleMs: 10_000, totalMs: 60_000 },
      maxJsonDepth: 8,
      invocationTtlMs: HOUR,
      idempotencyKeyTtlMs: HOUR,
      journalLimits: { ...DEFAULT_JOURNAL_LIMITS, ...options.limits },
    },
  };
  const call = world.serve([gatewayRouter(deps)]);
  const send = (query: string, body = '{"by": "ada"}', headers: Record<string, string> = {}) =>
    call({ method: 'POST', path: `${EVENT}${query}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers }, body });

  /** An invocation of bot-a, queued; `waiting`: claimed, and suspended in a wait for the event `approved`. */
  async function invocation({ waiting = false, botId = 'bot-a' } = {}) {
    const now = world.clock.now();
    const inv = newInvocation({ botId, createdAt: now, expireAt: now + HOUR });
    await world.store.invocations.create(inv);
    const ref: InvocationRef = { botId, id: inv.id };
    if (waiting) {
      const claimed = await world.store.invocations.claim(ref, 'executor', 60_000, now);
      const lease = { owner: 'executor', attempt: claimed?.attempt ?? 0 };
      await world.store.journal.beginWait(ref, lease, { kind: 'event', name: 'approved', occurrence: 1, startedAt: now, until: now + HOUR }, DEFAULT_JOURNAL_LIMITS);
      expect(await world.store.invocations.suspend(ref, lease, { reason: { kind: 'event', name: 'approved', until: now + HOUR }, activeMs: 5, keepUntil: now + 2 * HOUR }, now)).toBe('waiting');
    }
    return ref;
  }

  /** The payload the invocation's next wait for `name` takes, as JSON text (it claims the invocation to begin the wait). */
  async function takenPayload(ref: InvocationRef, name = 'approved') {
    const now = world.clock.now();
    const claimed = await world.store.invocations.claim(ref, 'taker', 60_000, now);
    const entry = await world.store.journal.beginWait(ref, { owner: 'taker', attempt: claimed?.attempt ?? 0 }, { kind: 'event', name, occurrence: 1, startedAt: now, until: now + HOUR }, DEFAULT_JOURNAL_LIMITS);
    return entry?.resultJson;
  }

  return { world, jobs, call, send, invocation, takenPayload, token, otherToken: other.token };
}

const json = (reply: { body: string }) => JSON.parse(reply.body);

describe('POST .../GenericIntegrationEvent (the gateway router)', () => {
  let world: SmallServices | undefined;
  afterEach(async () => world?.close());

  it('202 resumed: completes the wait, queues the suspended run and publishes its job', async () => {
    const g = await gateway();
    world = g.world;
    const ref = await g.invocation({ waiting: true });
    const reply = await g.send(`?invocationId=${ref.id}&name=approved`);
    expect([reply.status, json(reply)]).toEqual([202, { invocationId: ref.id, name: 'approved', status: 'resumed' }]);
    expect(g.jobs).toEqual([{ kind: 'job', version: 1, botId: 'bot-a', invocationId: ref.id, pool: 'default' }]);
    expect((await g.world.store.invocations.getState(ref))?.status).toBe('Queued');
    expect((await g.world.store.journal.read(ref))[0]).toMatchObject({ name: 'approved', status: 'done', resultJson: '{"by": "ada"}' });
  });

  it('202 kept: no wait yet, the next one takes it; JSON kept as sent, text and forms converted, none as null', async () => {
    const g = await gateway();
    world = g.world;
    const cases: Array<[string, string, string]> = [
      ['application/json', '{"by":  "ada", "n": 1.50}', '{"by":  "ada", "n": 1.50}'],
      ['text/plain', 'approved by ada', '"approved by ada"'],
      ['application/x-www-form-urlencoded', 'by=ada&by=bob', '{"by":["ada","bob"]}'],
      ['application/json', '', 'null'],
    ];
    for (const [type, body, payload] of cases) {
      const ref = await g.invocation();
      const reply = await g.send(`?invocationId=${ref.id}&name=approved`, body, { 'content-type': type });
      expect([type, reply.status, json(reply).status]).toEqual([type, 202, 'kept']);
      expect([type, await g.takenPayload(ref)]).toEqual([type, payload]);
    }
    expect(g.jobs).toEqual([]);
  });

  it.each([
    ['no invocationId', '?name=approved'],
    ['an empty invocationId', '?invocationId=&name=approved'],
    ['an invocationId of 129 characters', `?invocationId=${'a'.repeat(129)}&name=approved`],
    ['two invocationIds', '?invocationId=a&invocationId=b&name=approved'],
    ['no name', '?invocationId=INV'],
    ['an empty name', '?invocationId=INV&name='],
    ['a name of 201 characters', `?invocationId=INV&name=${'n'.repeat(201)}`],
    ['a name with a control character', '?invocationId=INV&name=a%1Bb'],
    ['two names', '?invocationId=INV&name=a&name=b'],
  ])('400 for %s', async (_case, query) => {
    const g = await gateway();
    world = g.world;
    const ref = await g.invocation();
    const reply = await g.send(query.replace('INV', ref.id));
    expect([reply.status, json(reply).type]).toEqual([400, 'urn:gi:problem:bad-request']);
    expect(await g.takenPayload(ref)).toBeNull();
  });

  it('400 for a body that is not JSON, JSON nested too deep, or bytes that are not UTF-8', async () => {
    const g = await gateway();
    world = g.world;
    const ref = await g.invocation();
    const query = `?invocationId=${ref.id}&name=approved`;
    expect((await g.send(query, '{"by": ')).status).toBe(400);
    expect((await g.send(query, `${'['.repeat(9)}${']'.repeat(9)}`)).status).toBe(400);
    expect((await g.call({ method: 'POST', path: `${EVENT}${query}`, headers: { authorization: `Bearer ${g.token}`, 'content-type': 'text/plain' }, body: Buffer.from([0x61, 0xff, 0xfe]) })).status).toBe(400);
    expect(await g.takenPayload(ref)).toBeNull();
  });

  it('401 without a token or with a malformed one, 403 with another bot\'s, 404 for another bot\'s invocation', async () => {
    const g = await gateway();
    world = g.world;
    const ref = await g.invocation();
    const query = `?invocationId=${ref.id}&name=approved`;
    expect((await g.call({ method: 'POST', path: `${EVENT}${query}`, headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
    expect((await g.send(query, '{}', { authorization: 'Bearer not.a.token' })).status).toBe(401);
    expect((await g.send(query, '{}', { authorization: `Bearer ${g.otherToken}` })).status).toBe(403);
    const theirs = await g.invocation({ botId: 'bot-b' });
    const reply = await g.send(`?invocationId=${theirs.id}&name=approved`);
    expect([reply.status, json(reply).type]).toEqual([404, 'urn:gi:problem:not-found']);
    expect(await g.takenPayload(ref)).toBeNull();
  });

  it('404 for an unknown invocation and below platform version 9.10; 405 for another method', async () => {
    const g = await gateway();
    world = g.world;
    expect((await g.send('?invocationId=no-such-invocation&name=approved')).status).toBe(404);
    const get = await g.call({ method: 'GET', path: `${EVENT}?invocationId=x&name=y`, headers: { authorization: `Bearer ${g.token}` } });
    expect([get.status, get.headers.allow]).toEqual([405, 'POST']);
    const old = await gateway({ platformVersion: [9, 9] });
    const ref = await old.invocation();
    expect((await old.send(`?invocationId=${ref.id}&name=approved`)).status).toBe(404);
    await old.world.close();
  });

  it('409 already-finished for an invocation that ended, naming how; the event is not kept', async () => {
    const g = await gateway();
    world = g.world;
    const ref = await g.invocation();
    await g.world.store.invocations.cancel(ref, { code: 'cancelled', title: 'Invocation cancelled', detail: 'by the test' }, g.world.clock.now());
    const reply = await g.send(`?invocationId=${ref.id}&name=approved`);
    expect([reply.status, json(reply)]).toEqual([409, expect.objectContaining({ type: 'urn:gi:problem:already-finished', invocationId: ref.id, detail: expect.stringContaining('(Cancelled)') })]);
  });

  it('413 for a payload over STEP_RESULT_MAX_SIZE and for an event past JOURNAL_MAX_KEPT_EVENTS, naming the setting; 415 for a binary type or another charset', async () => {
    const g = await gateway({ limits: { maxResultBytes: 1024, maxKeptEvents: 1 } });
    world = g.world;
    const ref = await g.invocation();
    const query = `?invocationId=${ref.id}&name=approved`;
    expect((await g.send(query, JSON.stringify('x'.repeat(2000)))).status).toBe(413);
    expect((await g.send(query, '{}', { 'content-type': 'application/octet-stream' })).status).toBe(415);
    expect((await g.send(query, '{}', { 'content-type': 'application/json; charset=latin1' })).status).toBe(415);
    expect((await g.send(query, '1')).status).toBe(202);
    const second = await g.send(query, '2');
    expect([second.status, json(second).detail]).toEqual([413, expect.stringContaining('JOURNAL_MAX_KEPT_EVENTS')]);
    expect(await g.takenPayload(ref)).toBe('1');
  });

  it('answers any query with 202, 400 or 404, never a 5xx', async () => {
    const g = await gateway();
    world = g.world;
    const ref = await g.invocation();
    const value = fc.oneof(fc.constant(ref.id), fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 50 }));
    await fc.assert(
      fc.asyncProperty(value, value, async (invocationId, name) => {
        const query = `?invocationId=${encodeURIComponent(invocationId)}&name=${encodeURIComponent(name)}`;
        const reply = await g.send(query, '{}');
        expect([202, 400, 404, 413]).toContain(reply.status);
      }),
      { numRuns: 150 },
    );
  });
});

/** sendEvent's deps over a journal that answers `delivery` (or throws it) and a bus that may refuse; the log lines and jobs kept. */
function direct(delivery: EventDelivery | null | Error, options: { state?: Partial<InvocationState> | null; busDown?: boolean } = {}) {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) if (text) lines.push(JSON.parse(text) as Record<string, unknown>);
      done();
    },
  });
  const published: JobMessage[] = [];
  const sent: unknown[] = [];
  const deps = {
    store: {
      journal: {
        sendEvent: async (...args: unknown[]) => {
          sent.push(args);
          if (delivery instanceof Error) throw delivery;
          return delivery;
        },
      },
      invocations: { getState: async () => options.state ?? null },
    },
    bus: {
      publish: async (job: JobMessage) => {
        if (options.busDown) throw new Error('The message broker is not reachable.');
        published.push(job);
      },
    },
    clock: { now: () => 42 },
    logger: createLogger('info', 'test', { destination }),
    settings: { journalLimits: DEFAULT_JOURNAL_LIMITS },
  } as unknown as GatewayDeps;
  return { deps, lines, published, sent };
}

const ref: InvocationRef = { botId: 'acme', id: 'inv-1' };
const failure = (sending: Promise<unknown>) => sending.then(() => null, (error: unknown) => error as GiError);

describe('sendEvent', () => {
  it('hands the journal the event with the clock time and the limits, and publishes the job of a resumed run on its pool', async () => {
    const { deps, published, sent } = direct({ delivered: 'resumed', pool: 'reports' });
    expect(await sendEvent(deps, ref, 'approved', '{"by":"ada"}')).toEqual({ invocationId: 'inv-1', name: 'approved', status: 'resumed' });
    expect(sent).toEqual([[ref, { name: 'approved', payloadJson: '{"by":"ada"}', at: 42 }, DEFAULT_JOURNAL_LIMITS]]);
    expect(published).toEqual([{ kind: 'job', version: 1, botId: 'acme', invocationId: 'inv-1', pool: 'reports' }]);
  });

  it('publishes nothing for an event kept for a later wait', async () => {
    const { deps, published } = direct({ delivered: 'kept' });
    expect(await sendEvent(deps, ref, 'approved', 'null')).toEqual({ invocationId: 'inv-1', name: 'approved', status: 'kept' });
    expect(published).toEqual([]);
  });

  it('answers a resumed run whose publish failed, leaving it to the sweeper, and logs why', async () => {
    const { deps, lines } = direct({ delivered: 'resumed', pool: 'default' }, { busDown: true });
    expect((await sendEvent(deps, ref, 'approved', 'null')).status).toBe('resumed');
    expect(lines).toEqual([expect.objectContaining({ level: 40, invocationId: 'inv-1', msg: 'publish of a resumed run failed; left for the sweeper', err: expect.objectContaining({ message: 'The message broker is not reachable.' }) })]);
  });

  it('refuses a bad name before touching the journal', async () => {
    const { deps, sent } = direct({ delivered: 'kept' });
    const refused = await failure(sendEvent(deps, ref, '', 'null'));
    expect([refused?.code, refused?.detail]).toEqual(['bad_request', 'The query parameter name must be the event name the run waits for: 1 to 200 characters, no control characters.']);
    expect(sent).toEqual([]);
  });

  it('answers 413 for a journal limit, a GiError of the store as it is, and 503 for any other failure', async () => {
    const limit = await failure(sendEvent(direct(new JournalLimitExceeded('more than 1 kept event (JOURNAL_MAX_KEPT_EVENTS)')).deps, ref, 'approved', 'null'));
    expect([limit?.code, limit?.detail]).toEqual(['payload_too_large', 'The event was not kept: more than 1 kept event (JOURNAL_MAX_KEPT_EVENTS)']);
    const own = new GiError('forbidden', 'Forbidden', 'from the store');
    expect(await failure(sendEvent(direct(own).deps, ref, 'approved', 'null'))).toBe(own);
    const down = await failure(sendEvent(direct(new Error('SQLITE_BUSY')).deps, ref, 'approved', 'null'));
    expect([down?.code, down?.detail, down?.headers]).toEqual(['unavailable', 'The event could not be stored; nothing was kept. Try again.', { 'Retry-After': '5' }]);
  });

  it('answers 409 naming the status of a finished invocation, and 404 with the id cut to 80 characters for an unknown one', async () => {
    const finished = await failure(sendEvent(direct(null, { state: { status: 'Completed' } }).deps, ref, 'approved', 'null'));
    expect([finished?.code, finished?.title, finished?.detail, finished?.extensions]).toEqual([
      'already_finished',
      'Invocation already finished',
      'The invocation has already finished (Completed); the event was not kept.',
      { invocationId: 'inv-1' },
    ]);
    const running = await failure(sendEvent(direct(null, { state: { status: 'Running' } }).deps, ref, 'approved', 'null'));
    expect(running?.code).toBe('not_found');
    const long = { botId: 'acme', id: 'i'.repeat(100) };
    const unknown = await failure(sendEvent(direct(null).deps, long, 'approved', 'null'));
    expect([unknown?.code, unknown?.detail]).toEqual(['not_found', `No invocation '${'i'.repeat(80)}' exists for this bot (unknown or expired).`]);
  });
});

import { GiError } from '@gi/domain';
import type { ActiveCount, BotQuotas, Quotas } from '@gi/domain';
import { COUNT_CACHE_MS, QUOTA_CACHE_MS, QuotaGate } from './quota-gate';
import type { QuotaGateDeps } from './quota-gate';

const none: Quotas = { ratePerSecond: null, burst: null, maxInFlight: null };
const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A store whose quotas and in-flight counts the test sets; every read is counted. */
function fakeStore() {
  const state = { quotas: { bot: none, tokens: {} } as BotQuotas, active: { total: 0, byToken: {} } as ActiveCount, failing: false, quotaReads: 0, countReads: 0 };
  const catalog = {
    async getQuotas() {
      state.quotaReads++;
      if (state.failing) throw new Error('SQLITE_BUSY');
      return structuredClone(state.quotas);
    },
  };
  const invocations = {
    async countActive() {
      state.countReads++;
      if (state.failing) throw new Error('SQLITE_BUSY');
      return structuredClone(state.active);
    },
  };
  return { state, catalog, invocations };
}

class FakeClock {
  t = 1_000_000;
  now() {
    return this.t;
  }
}

function gate(options: { peers?: number; defaults?: QuotaGateDeps['defaults'] } = {}) {
  const store = fakeStore();
  const clock = new FakeClock();
  const refusals: string[] = [];
  const quotaGate = new QuotaGate({
    catalog: store.catalog,
    invocations: store.invocations,
    clock,
    defaults: options.defaults ?? { ratePerSecond: 0, burst: null, maxInFlight: 0 },
    peers: () => options.peers ?? 1,
    onRefused: (scope, quota) => refusals.push(`${scope}:${quota}`),
  });
  return { quotaGate, store, clock, refusals };
}

async function refusal(admitting: Promise<unknown>): Promise<GiError> {
  const error = await admitting.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof GiError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

describe('QuotaGate', () => {
  describe('rates', () => {
    it('admits a bot\'s burst, then answers 429 with Retry-After until the rate refills', async () => {
      const { quotaGate, store, clock, refusals } = gate();
      store.state.quotas.bot = { ratePerSecond: 2, burst: 2, maxInFlight: null };
      await quotaGate.admit('acme', 't1');
      await quotaGate.admit('acme', 't2');
      const refused = await refusal(quotaGate.admit('acme', 't1'));
      expect([refused.code, refused.headers['Retry-After'], refused.detail]).toEqual([
        'rate_limited',
        '1',
        'The rate limit of 2 calls per second for this bot was exceeded.',
      ]);
      expect(refused.extensions).toEqual({ scope: 'bot', quota: 'ratePerSecond', limit: 2 });
      expect(refusals).toEqual(['bot:ratePerSecond']);
      clock.t += 500;
      await quotaGate.admit('acme', 't1');
      await quotaGate.admit('other-bot', 't9');
    });

    it('applies the service defaults to bots without quotas of their own', async () => {
      const { quotaGate } = gate({ defaults: { ratePerSecond: 0.5, burst: null, maxInFlight: 0 } });
      await quotaGate.admit('acme', 't1');
      expect((await refusal(quotaGate.admit('acme', 't1'))).headers['Retry-After']).toBe('2');
    });

    it('limits a token within its bot and gives the bot its call back when the token is refused', async () => {
      const { quotaGate, store } = gate();
      store.state.quotas = { bot: { ratePerSecond: 1, burst: 3, maxInFlight: null }, tokens: { noisy: { ratePerSecond: 1, burst: 1, maxInFlight: null } } };
      await quotaGate.admit('acme', 'noisy');
      const refused = await refusal(quotaGate.admit('acme', 'noisy'));
      expect([refused.detail, refused.extensions.scope]).toEqual(['The rate limit of 1 calls per second for this token was exceeded.', 'token']);
      // The bot's burst of 3: one spent by noisy, two left for its other tokens.
      await quotaGate.admit('acme', 'quiet');
      await quotaGate.admit('acme', 'quiet');
      expect((await refusal(quotaGate.admit('acme', 'quiet'))).extensions.scope).toBe('bot');
    });

    it('enforces its share when several gateways enforce the limit together', async () => {
      const { quotaGate, store } = gate({ peers: 4 });
      store.state.quotas.bot = { ratePerSecond: 8, burst: 8, maxInFlight: null };
      await quotaGate.admit('acme', 't1');
      await quotaGate.admit('acme', 't1');
      const refused = await refusal(quotaGate.admit('acme', 't1'));
      // 2 calls per second here: the next one in half a second.
      expect(refused.headers['Retry-After']).toBe('1');
    });
  });

  describe('invocations in flight', () => {
    it('admits up to the bot\'s limit counting the store\'s count and its own admissions, re-reading before it refuses', async () => {
      const { quotaGate, store, clock } = gate();
      store.state.quotas.bot = { ...none, maxInFlight: 3 };
      store.state.active = { total: 1, byToken: { t1: 1 } };
      (await quotaGate.admit('acme', 't1')).stored();
      (await quotaGate.admit('acme', 't1')).stored();
      expect((await refusal(quotaGate.admit('acme', 't1'))).detail).toBe(
        'This bot already has 3 invocations in flight (queued or running), its limit; try again once one finishes.',
      );
      expect(store.state.countReads).toBe(1);
      // Both are in the store now, and one of the three finished: a re-read (not sooner than 250 ms
      // after the last) lets the next call in.
      store.state.active = { total: 2, byToken: { t1: 2 } };
      clock.t += 300;
      await quotaGate.admit('acme', 't1');
      expect(store.state.countReads).toBe(2);
    });

    it('keeps counting calls whose invocation is not stored yet, whatever a re-read says', async () => {
      const { quotaGate, store, clock } = gate();
      store.state.quotas.bot = { ...none, maxInFlight: 2 };
      const first = await quotaGate.admit('acme', 't1');
      const second = await quotaGate.admit('acme', 't1');
      clock.t += 300;
      // The store does not show them yet (their writes have not committed): still two in flight here.
      await refusal(quotaGate.admit('acme', 't1'));
      expect(store.state.countReads).toBe(2);
      first.stored();
      second.release();
      store.state.active = { total: 1, byToken: { t1: 1 } };
      clock.t += 300;
      await quotaGate.admit('acme', 't1');
      await refusal(quotaGate.admit('acme', 't1'));
    });

    it('frees the place of an admitted call that stored nothing', async () => {
      const { quotaGate, store } = gate();
      store.state.quotas.bot = { ...none, maxInFlight: 1 };
      const first = await quotaGate.admit('acme', 't1');
      await refusal(quotaGate.admit('acme', 't1'));
      first.release();
      await quotaGate.admit('acme', 't1');
    });

    it('limits a token without touching the other tokens of its bot', async () => {
      const { quotaGate, store } = gate();
      store.state.quotas.tokens = { t1: { ...none, maxInFlight: 1 } };
      await quotaGate.admit('acme', 't1');
      const refused = await refusal(quotaGate.admit('acme', 't1'));
      expect(refused.extensions).toEqual({ scope: 'token', quota: 'maxInFlight', limit: 1 });
      await quotaGate.admit('acme', 't2');
      await quotaGate.admit('acme', 't2');
    });

    it('admits at most its share of the headroom between reads when gateways share the limit', async () => {
      const { quotaGate, store } = gate({ peers: 2 });
      store.state.quotas.bot = { ...none, maxInFlight: 5 };
      store.state.active = { total: 1, byToken: {} };
      // Headroom 4 between two gateways: 2 each.
      await quotaGate.admit('acme', 't1');
      await quotaGate.admit('acme', 't1');
      await refusal(quotaGate.admit('acme', 't1'));
    });

    it('reads the count again in the background once it is older than a second', async () => {
      const { quotaGate, store, clock } = gate();
      store.state.quotas.bot = { ...none, maxInFlight: 100 };
      await quotaGate.admit('acme', 't1');
      clock.t += COUNT_CACHE_MS - 1;
      await quotaGate.admit('acme', 't1');
      expect(store.state.countReads).toBe(1);
      clock.t += 1;
      await quotaGate.admit('acme', 't1');
      await flush();
      expect(store.state.countReads).toBe(2);
    });

    it('reads no count for bots without an in-flight limit, and knows no backlog for them', async () => {
      const { quotaGate, store } = gate();
      for (let i = 0; i < 5; i++) expect((await quotaGate.admit('acme', 't1')).backlog).toBeUndefined();
      expect(store.state.countReads).toBe(0);
    });

    it("tells each admitted call its bot's backlog: the store's count and this gateway's calls it does not show yet", async () => {
      const { quotaGate, store } = gate({ defaults: { ratePerSecond: 0, burst: null, maxInFlight: 10_000 } });
      store.state.active = { total: 20, byToken: {} };
      const backlogs = [];
      for (let i = 0; i < 3; i++) {
        const admission = await quotaGate.admit('acme', 't1');
        backlogs.push(admission.backlog);
        if (i === 0) admission.stored();
      }
      // 20 stored; then the first call stored, then the second still being stored.
      expect(backlogs).toEqual([20, 21, 22]);
    });
  });

  describe('rates and in flight together', () => {
    it('gives back the rate of a call refused for being over the in-flight limit', async () => {
      const { quotaGate, store } = gate();
      store.state.quotas.bot = { ratePerSecond: 1, burst: 2, maxInFlight: 1 };
      const first = await quotaGate.admit('acme', 't1');
      await refusal(quotaGate.admit('acme', 't1'));
      first.release();
      // The clock stands still: only the refunded token of the refused call lets this one in.
      await quotaGate.admit('acme', 't1');
    });

    it('counts calls without a token (inbound schemes) against their bot only', async () => {
      const { quotaGate, store } = gate();
      store.state.quotas = { bot: { ...none, maxInFlight: 2 }, tokens: { t1: { ratePerSecond: 1, burst: 1, maxInFlight: 1 } } };
      await quotaGate.admit('acme', null);
      await quotaGate.admit('acme', null);
      expect((await refusal(quotaGate.admit('acme', null))).extensions).toEqual({ scope: 'bot', quota: 'maxInFlight', limit: 2 });
    });

    it('counts itself alone when the registry knows no gateway', async () => {
      const { quotaGate, store } = gate({ peers: 0 });
      store.state.quotas.bot = { ...none, maxInFlight: 1 };
      await quotaGate.admit('acme', 't1');
      await refusal(quotaGate.admit('acme', 't1'));
    });
  });

  it('names a limit of one invocation in the singular, with Retry-After', async () => {
    const { quotaGate, store, refusals } = gate();
    store.state.quotas.tokens = { t1: { ...none, maxInFlight: 1 } };
    await quotaGate.admit('acme', 't1');
    const refused = await refusal(quotaGate.admit('acme', 't1'));
    expect([refused.code, refused.title, refused.detail, refused.headers]).toEqual([
      'rate_limited',
      'Too many requests',
      'This token already has 1 invocation in flight (queued or running), its limit; try again once one finishes.',
      { 'Retry-After': '1' },
    ]);
    expect(refusals).toEqual(['token:maxInFlight']);
  });

  it('still counts the calls it admitted when a read of the count fails', async () => {
    const { quotaGate, store, clock } = gate();
    store.state.quotas.bot = { ...none, maxInFlight: 2 };
    (await quotaGate.admit('acme', 't1')).stored();
    clock.t += COUNT_CACHE_MS;
    store.state.failing = true;
    // This call starts a read in the background, which fails: the first call is not forgotten.
    await quotaGate.admit('acme', 't1');
    await flush();
    clock.t += 300;
    // Two in flight as far as this gateway knows: the third is not let in while the store cannot tell.
    expect((await refusal(quotaGate.admit('acme', 't1'))).code).toBe('unavailable');
  });

  describe('its own bookkeeping', () => {
    it("counts each token's calls apart: another token's calls in flight do not use up a token's limit", async () => {
      const { quotaGate, store } = gate();
      // The bot's own limit makes this gateway count every call, t2's too.
      store.state.quotas = { bot: { ...none, maxInFlight: 100 }, tokens: { t1: { ratePerSecond: 1, burst: 1, maxInFlight: 1 } } };
      await quotaGate.admit('acme', 't2');
      await quotaGate.admit('acme', 't1');
      await refusal(quotaGate.admit('acme', 't1'));
    });

    it('settles an admission once, however often it is told', async () => {
      const { quotaGate, store } = gate();
      store.state.quotas.bot = { ...none, maxInFlight: 1 };
      const first = await quotaGate.admit('acme', 't1');
      first.release();
      first.release();
      first.stored();
      await quotaGate.admit('acme', 't1');
      await refusal(quotaGate.admit('acme', 't1'));
    });

    it("waits for the count at a bot's first call: the store may hold its limit already", async () => {
      const { quotaGate, store } = gate();
      store.state.quotas.bot = { ...none, maxInFlight: 2 };
      store.state.active = { total: 2, byToken: {} };
      await refusal(quotaGate.admit('acme', 't1'));
    });

    it('reads the quotas and the count once for calls that arrive together', async () => {
      const { quotaGate, store } = gate();
      store.state.quotas.bot = { ...none, maxInFlight: 10 };
      await Promise.all([quotaGate.admit('acme', 't1'), quotaGate.admit('acme', 't1'), quotaGate.admit('acme', 't1')]);
      expect([store.state.quotaReads, store.state.countReads]).toEqual([1, 1]);
    });

    it('reads the count again before refusing once it is 250 ms old, not sooner', async () => {
      const { quotaGate, store, clock } = gate();
      store.state.quotas.bot = { ...none, maxInFlight: 1 };
      (await quotaGate.admit('acme', 't1')).stored();
      store.state.active = { total: 1, byToken: { t1: 1 } };
      clock.t += 249;
      await refusal(quotaGate.admit('acme', 't1'));
      expect(store.state.countReads).toBe(1);
      clock.t += 1;
      await refusal(quotaGate.admit('acme', 't1'));
      expect(store.state.countReads).toBe(2);
    });

    it('refuses without anyone told of refusals', async () => {
      const quotaGate = new QuotaGate({ ...fakeStore(), clock: new FakeClock(), defaults: { ratePerSecond: 1, burst: 1, maxInFlight: 0 }, peers: () => 1 });
      await quotaGate.admit('acme', 't1');
      const refused = await refusal(quotaGate.admit('acme', 't1'));
      expect([refused.code, refused.title]).toEqual(['rate_limited', 'Too many requests']);
    });

    it("forgets a bot idle for a minute: its next call goes by a fresh count, not the last one's", async () => {
      const { quotaGate, store, clock } = gate({ defaults: { ratePerSecond: 0, burst: null, maxInFlight: 10_000 } });
      store.state.active = { total: 5, byToken: {} };
      const first = await quotaGate.admit('acme', 't1');
      first.stored();
      expect(first.backlog).toBe(5);
      // All of them finished meanwhile; the next read of the count answers when the test says.
      let answer: (count: ActiveCount) => void = () => undefined;
      store.invocations.countActive = () => new Promise((resolve) => (answer = resolve));
      clock.t += 60_001;
      const next = quotaGate.admit('acme', 't1');
      await flush();
      answer({ total: 0, byToken: {} });
      expect((await next).backlog).toBe(0);
    });
  });

  it('applies a change of the quotas within five seconds, reading them in the background while the bot is busy', async () => {
    const { quotaGate, store, clock } = gate();
    await quotaGate.admit('acme', 't1');
    store.state.quotas.bot = { ratePerSecond: 1, burst: 1, maxInFlight: null };
    clock.t += QUOTA_CACHE_MS / 2 - 1;
    await quotaGate.admit('acme', 't1');
    await quotaGate.admit('acme', 't1');
    expect(store.state.quotaReads).toBe(1);
    clock.t += 1;
    // Half the time passed: this call still goes by the old quotas while the new ones are read.
    await quotaGate.admit('acme', 't1');
    await flush();
    expect(store.state.quotaReads).toBe(2);
    await quotaGate.admit('acme', 't1');
    await refusal(quotaGate.admit('acme', 't1'));

    // An idle bot: its first call after five seconds waits for the quotas of now (none may be in flight).
    store.state.quotas.bot = { ratePerSecond: 100, burst: 100, maxInFlight: 0 };
    clock.t += QUOTA_CACHE_MS;
    expect((await refusal(quotaGate.admit('acme', 't1'))).extensions.quota).toBe('maxInFlight');
    expect(store.state.quotaReads).toBe(3);
  });

  it('answers 503 when the store cannot tell the quotas', async () => {
    const { quotaGate, store } = gate();
    store.state.failing = true;
    const refused = await refusal(quotaGate.admit('acme', 't1'));
    expect([refused.code, refused.detail]).toEqual(['unavailable', 'The quotas of this bot could not be checked; nothing was accepted. Try again.']);
  });
});

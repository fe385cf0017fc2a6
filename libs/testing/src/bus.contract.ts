import type { CancelEvent, CompletionEvent, JobBus, JobMessage } from '@gi/contracts';

export interface BusUnderTest {
  bus: JobBus;
  dispose(): Promise<void>;
}

const job = (invocationId: string, pool = 'default', botId = 'bot-a'): JobMessage => ({ kind: 'job', version: 1, botId, invocationId, pool });

/** Resolves when `predicate` holds, polling briefly; fails after `timeoutMs`. */
export async function eventually(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The behaviour every JobBus adapter must show (in-process, RabbitMQ). */
export function describeBusContract(name: string, open: () => Promise<BusUnderTest>): void {
  describe(`Bus contract: ${name}`, () => {
    let subject: BusUnderTest;
    beforeEach(async () => {
      subject = await open();
    });
    afterEach(async () => {
      await subject.dispose();
    });

    it('delivers each published job once to a consumer of its pool', async () => {
      const seen: string[] = [];
      await subject.bus.consume('default', 4, async (j) => {
        seen.push(j.invocationId);
        return 'ack';
      });
      for (let i = 0; i < 20; i++) await subject.bus.publish(job(`inv-${i}`));
      await eventually(() => seen.length === 20);
      expect(new Set(seen).size).toBe(20);
    });

    it('keeps pools apart', async () => {
      const bulk: string[] = [];
      await subject.bus.consume('bulk', 1, async (j) => {
        bulk.push(j.invocationId);
        return 'ack';
      });
      await subject.bus.publish(job('d1', 'default'));
      await subject.bus.publish(job('b1', 'bulk'));
      await eventually(() => bulk.length === 1);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(bulk).toEqual(['b1']);
    });

    it('never runs more handlers at once than the consumer allows', async () => {
      let running = 0;
      let peak = 0;
      let done = 0;
      await subject.bus.consume('default', 3, async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setTimeout(resolve, 20));
        running--;
        done++;
        return 'ack';
      });
      for (let i = 0; i < 12; i++) await subject.bus.publish(job(`c-${i}`));
      await eventually(() => done === 12);
      expect(peak).toBeLessThanOrEqual(3);
      expect(peak).toBeGreaterThan(1);
    });

    it('redelivers a job its handler requeued', async () => {
      const attempts: string[] = [];
      await subject.bus.consume('default', 1, async (j) => {
        attempts.push(j.invocationId);
        return attempts.length === 1 ? 'requeue' : 'ack';
      });
      await subject.bus.publish(job('again'));
      await eventually(() => attempts.length === 2);
      expect(attempts).toEqual(['again', 'again']);
    });

    it('reports how many jobs wait in a pool', async () => {
      await subject.bus.publish(job('w1', 'idle'));
      await subject.bus.publish(job('w2', 'idle'));
      // The broker's count may lag its confirm by a moment.
      let depth: number | null = null;
      for (let i = 0; i < 50 && depth !== 2; i++) {
        depth = await subject.bus.queueDepth('idle');
        if (depth !== 2) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(depth).toBe(2);
    });

    it('counts deliveries of a requeued job', async () => {
      const counts: number[] = [];
      await subject.bus.consume('default', 1, async (_j, delivery) => {
        counts.push(delivery?.deliveryCount ?? 0);
        return counts.length < 3 ? 'requeue' : 'ack';
      });
      await subject.bus.publish(job('counted'));
      await eventually(() => counts.length === 3);
      expect(counts).toEqual([1, 2, 3]);
    });

    it('hands a watched invocation\'s completion event to every listener', async () => {
      const a: CompletionEvent[] = [];
      const b: CompletionEvent[] = [];
      await subject.bus.onCompletion((e) => a.push(e));
      await subject.bus.onCompletion((e) => b.push(e));
      const watch = await subject.bus.watchCompletion('x');
      const event: CompletionEvent = { kind: 'completed', version: 1, botId: 'bot-a', invocationId: 'x', status: 'Completed' };
      await subject.bus.publishCompletion(event);
      watch.release();
      await eventually(() => a.length === 1 && b.length === 1);
      expect(a[0]).toEqual(event);
    });

    it('fans cancellations out to every listener, apart from completions', async () => {
      const a: CancelEvent[] = [];
      const b: CancelEvent[] = [];
      const completions: CompletionEvent[] = [];
      await subject.bus.onCancel((e) => a.push(e));
      const second = await subject.bus.onCancel((e) => b.push(e));
      await subject.bus.onCompletion((e) => completions.push(e));
      const event: CancelEvent = { kind: 'cancel', version: 1, botId: 'bot-a', invocationId: 'stop-me' };
      await subject.bus.publishCancel(event);
      await eventually(() => a.length === 1 && b.length === 1);
      expect(a[0]).toEqual(event);
      await second.close();
      await subject.bus.publishCancel({ ...event, invocationId: 'again' });
      await eventually(() => a.length === 2);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(b).toHaveLength(1);
      expect(completions).toEqual([]);
    });

    it('waits for running handlers when a consumer closes', async () => {
      let finished = false;
      let started = false;
      const subscription = await subject.bus.consume('default', 1, async () => {
        started = true;
        await new Promise((resolve) => setTimeout(resolve, 50));
        finished = true;
        return 'ack';
      });
      await subject.bus.publish(job('slow'));
      await eventually(() => started);
      await subscription.close();
      expect(finished).toBe(true);
    });

    it('redelivers a job whose handler threw', async () => {
      const attempts: string[] = [];
      await subject.bus.consume('default', 1, async (j) => {
        attempts.push(j.invocationId);
        if (attempts.length === 1) throw new Error('transient failure');
        return 'ack';
      });
      await subject.bus.publish(job('thrown'));
      await eventually(() => attempts.length === 2);
      expect(attempts).toEqual(['thrown', 'thrown']);
    });

    it('does not redeliver a job its handler dead-lettered', async () => {
      const attempts: string[] = [];
      await subject.bus.consume('default', 1, async (j) => {
        attempts.push(j.invocationId);
        return j.invocationId === 'poison' ? 'dead-letter' : 'ack';
      });
      await subject.bus.publish(job('poison'));
      await subject.bus.publish(job('healthy'));
      await eventually(() => attempts.includes('healthy'));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(attempts.filter((id) => id === 'poison')).toHaveLength(1);
    });

    it('holds a job published before any consumer until one comes', async () => {
      await subject.bus.publish(job('early'));
      const seen: string[] = [];
      await subject.bus.consume('default', 1, async (j) => {
        seen.push(j.invocationId);
        return 'ack';
      });
      await eventually(() => seen.length === 1);
      expect(seen).toEqual(['early']);
    });

    it('gives a closed consumer no more jobs; the next consumer of the pool gets them', async () => {
      const first: string[] = [];
      const subscription = await subject.bus.consume('default', 1, async (j) => {
        first.push(j.invocationId);
        return 'ack';
      });
      await subscription.close();
      await subject.bus.publish(job('later'));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const second: string[] = [];
      await subject.bus.consume('default', 1, async (j) => {
        second.push(j.invocationId);
        return 'ack';
      });
      await eventually(() => second.length === 1);
      expect(first).toEqual([]);
      expect(second).toEqual(['later']);
    });

    it('stops calling a completion listener once its subscription is closed', async () => {
      const closed: string[] = [];
      const open: string[] = [];
      const subscription = await subject.bus.onCompletion((e) => closed.push(e.invocationId));
      await subject.bus.onCompletion((e) => open.push(e.invocationId));
      await subscription.close();
      await subject.bus.watchCompletion('after-close');
      await subject.bus.publishCompletion({ kind: 'completed', version: 1, botId: 'bot-a', invocationId: 'after-close', status: 'Failed' });
      await eventually(() => open.length === 1);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(closed).toEqual([]);
    });

    it('takes many publishes in flight at once and delivers each once', async () => {
      const seen = new Map<string, number>();
      await subject.bus.consume('default', 8, async (j) => {
        seen.set(j.invocationId, (seen.get(j.invocationId) ?? 0) + 1);
        return 'ack';
      });
      await Promise.all(Array.from({ length: 300 }, (_, i) => subject.bus.publish(job(`many-${i}`))));
      await eventually(() => seen.size === 300);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect([...seen.values()].every((count) => count === 1)).toBe(true);
    });

    it("starts a bot's one job beside another bot's backlog, in turns, with at most perBot of a bot's jobs at once", async () => {
      const started: string[] = [];
      const releases = new Map<string, () => void>();
      let running = 0;
      let peakOfA = 0;
      await subject.bus.consume(
        'default',
        2,
        async (j) => {
          started.push(j.invocationId);
          const ofA = j.botId === 'bot-a';
          if (ofA) peakOfA = Math.max(peakOfA, ++running);
          await new Promise<void>((resolve) => releases.set(j.invocationId, resolve));
          if (ofA) running--;
          return 'ack';
        },
        { perBot: 1 },
      );
      // Bot A floods, each job published with its backlog as the gateway counts it; then bot B sends one.
      for (let i = 0; i < 40; i++) await subject.bus.publish(job(`a-${i}`, 'default', 'bot-a'), { backlog: i });
      await subject.bus.publish(job('b-0', 'default', 'bot-b'), { backlog: 0 });
      await eventually(() => started.includes('b-0'));
      // B started beside A's first, not after A's forty: A is held to its one at a time.
      expect(started).toEqual(['a-0', 'b-0']);
      await subject.bus.publish(job('b-1', 'default', 'bot-b'), { backlog: 1 });
      releases.get('b-0')?.();
      await eventually(() => started.includes('b-1'));
      expect(started).toHaveLength(3);
      // Then every job once, A's never two at a time.
      while (started.length < 42) {
        for (const [id, release] of releases) {
          releases.delete(id);
          release();
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      for (const release of releases.values()) release();
      expect(new Set(started).size).toBe(42);
      expect(peakOfA).toBe(1);
    });

    it('refuses to publish once closed', async () => {
      await subject.bus.close();
      await expect(subject.bus.publish(job('too-late'))).rejects.toThrow();
    });
  });
}

import type { CompletionEvent, JobBus, JobMessage } from '@gi/domain';

export interface BusUnderTest {
  bus: JobBus;
  dispose(): Promise<void>;
}

const job = (invocationId: string, pool = 'default'): JobMessage => ({ kind: 'job', version: 1, botId: 'bot-a', invocationId, pool });

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

    it('fans completion events out to every listener', async () => {
      const a: CompletionEvent[] = [];
      const b: CompletionEvent[] = [];
      await subject.bus.onCompletion((e) => a.push(e));
      await subject.bus.onCompletion((e) => b.push(e));
      const event: CompletionEvent = { kind: 'completed', version: 1, botId: 'bot-a', invocationId: 'x', status: 'Completed' };
      await subject.bus.publishCompletion(event);
      await eventually(() => a.length === 1 && b.length === 1);
      expect(a[0]).toEqual(event);
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
  });
}

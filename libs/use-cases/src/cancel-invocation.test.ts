import { cancelEvent, completionEvent } from '@gi/contracts';
import type { BusMessage } from '@gi/contracts';
import type { Invocation, InvocationError, InvocationStatus } from '@gi/domain';
import { GiError } from '@gi/domain';
import { cancelInvocation } from './cancel-invocation';
import type { CancelDeps } from './cancel-invocation';

const ref = { id: 'inv-1', botId: 'bot-a' };

/**
 * A store whose `cancel` answers `cancelled` and whose `get` finds an invocation in `status` (none when null),
 * and a bus that records what it carries, or refuses the kinds named in `refused`.
 */
function deps(cancelled: boolean, status: InvocationStatus | null, refused: BusMessage['kind'][] = []) {
  const cancels: { error: InvocationError; at: number }[] = [];
  const published: BusMessage[] = [];
  const publish = async (message: BusMessage) => {
    if (refused.includes(message.kind)) throw new Error('broker unreachable');
    published.push(message);
  };
  const invocations = {
    cancel: async (_ref: unknown, error: InvocationError, at: number) => (cancels.push({ error, at }), cancelled),
    get: async () => (status ? ({ ...ref, status } as Invocation) : null),
  };
  const all = { invocations, bus: { publishCancel: publish, publishCompletion: publish }, clock: { now: () => 42_000 } };
  return { deps: all as unknown as CancelDeps, cancels, published };
}

const refusal = (run: () => Promise<unknown>) =>
  run().then(
    () => 'resolved',
    (error: GiError) => ({ code: error.code, title: error.title, detail: error.detail, extensions: error.extensions }),
  );

describe('cancelInvocation', () => {
  it('records Cancelled at the clock time, with who asked, then tells the executor and the waiters', async () => {
    const { deps: cancelDeps, cancels, published } = deps(true, 'Running');
    expect(await cancelInvocation(cancelDeps, ref, 'caller')).toEqual({ announced: true });
    expect(cancels).toEqual([
      { error: { code: 'cancelled', title: 'Invocation cancelled', detail: 'The invocation was cancelled by its caller before it finished.' }, at: 42_000 },
    ]);
    expect(published).toEqual([cancelEvent(ref), completionEvent(ref, 'Cancelled')]);
  });

  it('says the control API cancelled it when it did', async () => {
    const { deps: cancelDeps, cancels } = deps(true, 'Queued');
    await cancelInvocation(cancelDeps, ref, 'control-api');
    expect(cancels[0].error.detail).toBe('The invocation was cancelled through the control API before it finished.');
  });

  it.each([['cancel' as const], ['completed' as const]])('answers announced: false when the bus refuses the %s message', async (kind) => {
    const { deps: cancelDeps, published } = deps(true, 'Running', [kind]);
    expect(await cancelInvocation(cancelDeps, ref, 'caller')).toEqual({ announced: false });
    // The other message still went out.
    expect(published.map((message) => message.kind)).toEqual([kind === 'cancel' ? 'completed' : 'cancel']);
  });

  it('succeeds again on a cancelled invocation, announcing nothing', async () => {
    const { deps: cancelDeps, published } = deps(false, 'Cancelled');
    expect(await cancelInvocation(cancelDeps, ref, 'caller')).toEqual({ announced: true });
    expect(published).toEqual([]);
  });

  it('refuses a finished invocation with already_finished, naming its status', async () => {
    const { deps: cancelDeps, published } = deps(false, 'Completed');
    expect(await refusal(() => cancelInvocation(cancelDeps, ref, 'caller'))).toEqual({
      code: 'already_finished',
      title: 'Already finished',
      detail: 'The invocation already finished (Completed); there is nothing left to cancel.',
      extensions: { invocationId: 'inv-1', status: 'Completed' },
    });
    expect(published).toEqual([]);
  });

  it('answers not_found for an unknown invocation, quoting at most 80 characters of its id', async () => {
    const { deps: cancelDeps } = deps(false, null);
    const long = { ...ref, id: `${'x'.repeat(80)}tail` };
    expect(await refusal(() => cancelInvocation(cancelDeps, long, 'caller'))).toEqual({
      code: 'not_found',
      title: 'Not found',
      detail: `No invocation '${'x'.repeat(80)}' exists for this bot (unknown or expired).`,
      extensions: {},
    });
  });
});

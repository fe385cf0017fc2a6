import type { Context } from 'koa';
import { finalReply, GiError, idempotencyKeyInUse } from '@gi/domain';
import type { WebhookAnswer } from './handle-webhook-call';

/**
 * Step 5's reply, rendered: the finished invocation's reply (the same as every poll gets: the rendered
 * ResponseBody or its error), the 202 of an async start, or the problem of a wait that ran out or a key
 * still in use. The headers set here go with the problem replies too.
 */
export function renderAnswer(ctx: Context, answer: WebhookAnswer): void {
  if (answer.preferenceApplied) ctx.set('Preference-Applied', answer.preferenceApplied);
  switch (answer.kind) {
    case 'finished': {
      const reply = finalReply(answer.invocation);
      ctx.status = 200;
      ctx.type = reply.contentType;
      ctx.body = reply.payload;
      return;
    }
    case 'accepted':
      // The same for `asyncResponse=true`, `Prefer: respond-async` and a hybrid wait that ran out.
      ctx.status = 202;
      ctx.set('Location', answer.location);
      ctx.body = { invocationId: answer.invocationId, status: 'Running' };
      return;
    case 'in-use':
      throw idempotencyKeyInUse(answer.invocationId, answer.location);
    case 'timed-out':
      throw new GiError('timeout', 'Sync wait timed out', `The job did not finish within ${answer.waitSeconds} s; it goes on and its result can be polled.`, {
        extensions: { invocationId: answer.invocationId },
        headers: { Location: answer.location },
      });
  }
}

import { notFound } from '@gi/domain';
import { cancelInvocation } from '@gi/use-cases';
import type { ControlRoutes } from '../control-routes';
import { validate } from '../control-routes';
import { activityQuery, invocationListQuery, listCursor, stepCursor, stepListQuery } from '../control.schemas';
import { detailView, iso, stepView, summaryView } from '../control.views';
import { activityStart, summarizeActivity } from '../invocation-activity';

/** The most invocations the activity chart reads; a busier window is reported as truncated. */
const ACTIVITY_LIMIT = 50_000;

/** A bot's invocations: listed, by minute (the console's activity chart), one in detail with its durable steps, cancelled. */
export function invocationRoutes({ routes, admin, deps }: ControlRoutes): void {
  const { store, clock } = deps;

  routes.get('/bots/:botId/invocations', admin, async (ctx) => {
    const { before, ...filter } = validate(invocationListQuery, ctx.query);
    // One more than asked tells whether an older page exists, without a second query.
    const found = await store.invocations.list(ctx.params.botId, { ...filter, limit: filter.limit + 1, after: before });
    const page = found.slice(0, filter.limit);
    const last = page[page.length - 1];
    ctx.body = { invocations: page.map(summaryView), nextBefore: found.length > filter.limit ? listCursor(last) : null };
  });

  routes.get('/bots/:botId/activity', admin, async (ctx) => {
    const { minutes } = validate(activityQuery, ctx.query);
    const now = clock.now();
    const timings = await store.invocations.timings(ctx.params.botId, activityStart(now, minutes), ACTIVITY_LIMIT);
    const activity = summarizeActivity(timings, now, minutes);
    ctx.body = { ...activity, from: iso(activity.from), to: iso(activity.to), minutes, truncated: timings.length === ACTIVITY_LIMIT };
  });

  routes.get('/bots/:botId/invocations/:invocationId', admin, async (ctx) => {
    const { botId, invocationId } = ctx.params;
    const invocation = await store.invocations.get({ botId, id: invocationId });
    if (!invocation) throw notFound(`No invocation '${invocationId}' for bot '${botId}'.`);
    ctx.body = detailView(invocation);
  });

  // A durable run's journal, newest first, page by page (the detail has only its count).
  routes.get('/bots/:botId/invocations/:invocationId/steps', admin, async (ctx) => {
    const { botId, invocationId } = ctx.params;
    const { limit, before } = validate(stepListQuery, ctx.query);
    const ref = { botId, id: invocationId };
    if (!(await store.invocations.getState(ref))) throw notFound(`No invocation '${invocationId}' for bot '${botId}'.`);
    // One more than asked tells whether an older page exists, without a second query.
    const found = await store.journal.list(ref, { limit: limit + 1, before });
    const page = found.slice(0, limit);
    ctx.body = { steps: page.map(stepView), nextBefore: found.length > limit ? stepCursor(page[page.length - 1]) : null };
  });

  routes.delete('/bots/:botId/invocations/:invocationId', admin, async (ctx) => {
    const { botId, invocationId } = ctx.params;
    await cancelInvocation({ invocations: store.invocations, bus: deps.bus, clock }, { botId, id: invocationId }, 'control-api');
    ctx.body = { invocationId, status: 'Cancelled' };
  });
}

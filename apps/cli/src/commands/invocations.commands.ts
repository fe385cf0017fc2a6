import { INVOCATION_STATUSES, isTerminal } from '@gi/domain';
import type { InvocationStatus } from '@gi/domain';
import { writeLine } from '../cli-io';
import type { CommandSpec } from '../command';
import type { InvocationDetail, InvocationSummaryView } from '../control-api';
import { fields, formatDuration, formatTime, json, table, toMillis } from '../format';
import { terminalText } from '../terminal-text';
import { botOption } from './shared-options';

const STATUSES: readonly string[] = INVOCATION_STATUSES;
/** How often `show --follow` reads the invocation again (the service writes a running one's lines about once a second). */
const FOLLOW_INTERVAL_MS = 1000;

const finished = (inv: Pick<InvocationDetail, 'status'>) => STATUSES.includes(inv.status) && isTerminal(inv.status as InvocationStatus);

const duration = (inv: InvocationSummaryView) => {
  if (inv.durationMs != null) return inv.durationMs;
  const started = toMillis(inv.startedAt);
  const finished = toMillis(inv.finishedAt);
  return started !== null && finished !== null ? finished - started : null;
};

const errorText = (inv: InvocationSummaryView) =>
  inv.error ? [inv.error.title, inv.error.detail].filter(Boolean).join(': ').replace(/\s+/g, ' ') : '';

export const invocationsList: CommandSpec = {
  path: ['invocations', 'list'],
  summary: 'List recent invocations of a bot, newest first',
  args: [],
  options: {
    bot: botOption,
    status: { type: 'string', value: 'S', description: `Only this status: ${STATUSES.join(', ')}` },
    integration: { type: 'string', value: 'I', description: 'Only this integration' },
    limit: { type: 'string', value: 'N', description: 'At most N invocations' },
    before: { type: 'string', value: 'CURSOR', description: 'The next, older page: the cursor the page before ended with' },
  },
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const statusText = input.string('status');
    const status = statusText === undefined ? undefined : STATUSES.find((s) => s.toLowerCase() === statusText.toLowerCase());
    if (statusText !== undefined && status === undefined) throw input.usage(`--status must be one of ${STATUSES.join(', ')}, got "${statusText}"`);
    const integration = input.string('integration');
    if (integration !== undefined) input.name('--integration', integration);
    const limit = input.int('limit', 1, 1000);

    const { invocations, nextBefore } = await ctx.control.listInvocations(botId, { status, integrationId: integration, limit, before: input.string('before') });
    if (ctx.json) return void writeLine(ctx.io.out, json(invocations));
    if (invocations.length === 0) return void writeLine(ctx.io.err, `No invocations for bot ${botId}${status ? ` with status ${status}` : ''}`);
    const rows = invocations.map((inv) => [
      inv.id,
      inv.integrationId,
      inv.entityName,
      inv.mode,
      inv.status,
      String(inv.attempt ?? ''),
      formatTime(inv.createdAt),
      formatDuration(duration(inv)),
      errorText(inv),
    ]);
    writeLine(ctx.io.out, table(['ID', 'INTEGRATION', 'ENTITY', 'MODE', 'STATUS', 'ATTEMPT', 'CREATED', 'DURATION', 'ERROR'], rows));
    if (nextBefore) writeLine(ctx.io.err, `More: gi invocations list --bot ${botId} --before ${nextBefore}${limit ? ` --limit ${limit}` : ''}`);
  },
};

export const invocationsShow: CommandSpec = {
  path: ['invocations', 'show'],
  summary: 'Show one invocation: timings, outcome, progress and the logs of the connector (so far, while it runs)',
  args: ['invocationId'],
  options: {
    bot: botOption,
    follow: { type: 'boolean', short: 'f', description: 'While it runs, print its new log lines as they are written, until it ends' },
  },
  details: 'The lines a run logs are written while it runs (about once a second), so a long job can be watched. The lines of an attempt cut short (its executor stopped) stay; once there was more than one attempt, each line is marked with its own (#1, #2...).',
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const id = input.arg('invocationId');
    let invocation = await ctx.control.getInvocation(botId, id);
    const follow = input.flag('follow');
    if (!ctx.json) writeLine(ctx.io.out, renderInvocation(invocation));
    if (follow) {
      let printed = invocation.logs.length;
      while (!finished(invocation)) {
        await ctx.io.sleep(FOLLOW_INTERVAL_MS);
        invocation = await ctx.control.getInvocation(botId, id);
        if (ctx.json) continue;
        for (const line of invocation.logs.slice(printed)) writeLine(ctx.io.out, logLine(line, invocation));
        printed = invocation.logs.length;
      }
      if (!ctx.json) writeLine(ctx.io.out, `--- ${invocation.status}${invocation.error ? `: ${errorText(invocation)}` : ''} ---`);
    }
    if (ctx.json) writeLine(ctx.io.out, json(invocation));
  },
};

export const invocationsCancel: CommandSpec = {
  path: ['invocations', 'cancel'],
  summary: 'Cancel a queued or running invocation: a queued one never runs, a running one is stopped',
  args: ['invocationId'],
  options: { bot: botOption },
  details: 'Its poll then answers 410 (cancelled). An invocation that already completed or failed cannot be cancelled (409).',
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const cancelled = await ctx.control.cancelInvocation(botId, input.arg('invocationId'));
    if (ctx.json) return void writeLine(ctx.io.out, json(cancelled));
    writeLine(ctx.io.out, `Cancelled invocation ${cancelled.invocationId} of bot ${botId}`);
  },
};

export function renderInvocation(inv: InvocationDetail): string {
  const pairs: Array<[string, string]> = [
    ['invocation', inv.id],
    ['integration', inv.integrationId],
    ['entity', inv.entityName],
    ['mode', inv.mode],
    ['status', inv.status],
    ['attempt', String(inv.attempt ?? '-')],
    ['created', formatTime(inv.createdAt)],
    ['started', formatTime(inv.startedAt)],
    ['finished', formatTime(inv.finishedAt)],
    ['duration', formatDuration(duration(inv))],
  ];
  if (inv.progress) pairs.push(['progress', `${inv.progress.percent}%${inv.progress.message ? ` ${inv.progress.message}` : ''}`]);
  if (inv.error) pairs.push(['error', errorText(inv)]);
  if (inv.callback) pairs.push(['callback', callbackText(inv.callback)]);
  const lines = [fields(pairs)];
  const response = responseBodyOf(inv.outcome);
  if (response !== undefined) lines.push('', '--- response body ---', json(response));
  const running = !finished(inv);
  lines.push('', inv.logs.length > 0 ? (running ? '--- logs so far ---' : '--- logs ---') : running ? '--- no logs yet ---' : '--- no logs ---');
  for (const log of inv.logs) lines.push(logLine(log, inv));
  return lines.join('\n');
}

/** One line of the connector's log; marked with its attempt once the invocation has had more than one. */
function logLine(line: InvocationDetail['logs'][number], inv: Pick<InvocationDetail, 'attempt'>): string {
  const attempt = (inv.attempt ?? 1) > 1 && line.attempt !== undefined ? `#${line.attempt} ` : '';
  return `${formatTime(line.at)} ${attempt}${terminalText(line.level.toUpperCase().padEnd(5), { singleLine: true })} ${terminalText(line.message, { singleLine: true })}`;
}

function callbackText(callback: NonNullable<InvocationDetail['callback']>): string {
  const tries = `${callback.attempts} attempt${callback.attempts === 1 ? '' : 's'}`;
  const next = callback.nextAttemptAt ? `, next ${formatTime(callback.nextAttemptAt)}` : '';
  const why = callback.lastError ? ` (${callback.lastError})` : '';
  return `${callback.state}, ${tries}${next} to ${callback.url}${why}`;
}

function responseBodyOf(outcome: unknown): unknown {
  if (typeof outcome !== 'object' || outcome === null || !('responseBody' in outcome)) return undefined;
  return outcome.responseBody;
}

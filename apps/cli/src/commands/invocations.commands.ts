import { INVOCATION_STATUSES, isTerminal } from '@gi/domain';
import type { InvocationStatus } from '@gi/domain';
import { writeLine } from '../cli-io';
import type { CommandSpec } from '../command';
import type { InvocationDetail, InvocationSummaryView } from '../control-api';
import { fields, formatDuration, formatTime, json, shellWord, table, toMillis } from '../format';
import { stepTable, waitText } from '../step-format';
import { terminalText } from '../terminal-text';
import { botOption } from './shared-options';

const STATUSES: readonly string[] = INVOCATION_STATUSES;
/** How often `show --follow` reads the invocation again (the service writes a running one's lines about once a second). */
const FOLLOW_INTERVAL_MS = 1000;
/** The latest steps `show` prints; `gi invocations steps` pages through them all. */
const SHOWN_STEPS = 50;

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
  summary: 'Show one invocation: timings, outcome, progress, what a durable job waits for, its latest steps and the logs of the connector (so far, while it runs)',
  args: ['invocationId'],
  options: {
    bot: botOption,
    follow: { type: 'boolean', short: 'f', description: 'While it runs, print its new log lines as they are written, until it ends' },
  },
  details: [
    'The lines a run logs are written while it runs (about once a second), so a long job can be watched. The lines of an attempt cut short (its executor stopped) stay; once there was more than one attempt, each line is marked with its own (#1, #2...).',
    `A durable job (Context.Step, Context.Sleep, Context.WaitForEvent) shows what it waits for and until when, and its latest ${SHOWN_STEPS} steps, newest first: name#occurrence, kind, status, attempts, duration and result size; 'gi invocations steps' lists them all.`,
  ].join('\n'),
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const id = input.arg('invocationId');
    let invocation = await ctx.control.getInvocation(botId, id);
    const follow = input.flag('follow');
    if (!ctx.json) {
      const steps = (invocation.steps ?? 0) > 0 ? await ctx.control.listSteps(botId, id, { limit: SHOWN_STEPS }) : null;
      writeLine(ctx.io.out, renderInvocation(invocation, steps && { ...steps, botId }));
    }
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

export const invocationsSteps: CommandSpec = {
  path: ['invocations', 'steps'],
  summary: "List a durable job's steps, sleeps and event waits, newest first",
  args: ['invocationId'],
  options: {
    bot: botOption,
    limit: { type: 'string', value: 'N', description: 'At most N steps (1 to 500; default 50)' },
    before: { type: 'string', value: 'CURSOR', description: 'The next, older page: the cursor the page before ended with' },
  },
  details: [
    'Each step of the invocation\'s journal: name#occurrence (the n-th call with that name), kind (step, sleep, event), status (done, failed, retrying, waiting), attempts, duration, result size, and its error or when it is due.',
    'With --json: the page as the service sent it, {"steps": [...], "nextBefore": CURSOR or null}.',
  ].join('\n'),
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const id = input.arg('invocationId');
    const limit = input.int('limit', 1, 500);
    const page = await ctx.control.listSteps(botId, id, { limit, before: input.string('before') });
    if (ctx.json) return void writeLine(ctx.io.out, json(page));
    if (page.steps.length === 0) return void writeLine(ctx.io.err, `No steps${input.string('before') ? ' before that one' : `: invocation ${id} has journalled none (Context.Step, Context.Sleep, Context.WaitForEvent)`}`);
    writeLine(ctx.io.out, stepTable(page.steps));
    if (page.nextBefore) writeLine(ctx.io.err, `More: ${stepsCommand(botId, id, page.nextBefore)}${limit ? ` --limit ${limit}` : ''}`);
  },
};

/** The command that lists the steps before `cursor`, ready to copy. */
const stepsCommand = (botId: string, id: string, cursor: string) => `gi invocations steps --bot ${botId} ${shellWord(id)} --before ${shellWord(cursor)}`;

export const invocationsCancel: CommandSpec = {
  path: ['invocations', 'cancel'],
  summary: 'Cancel a queued, running or waiting invocation: a queued one never runs, a running one is stopped, a waiting one never resumes',
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

/** A page of the latest steps of an invocation, for `show`. */
interface LatestSteps {
  botId: string;
  steps: Parameters<typeof stepTable>[0];
  nextBefore?: string | null;
}

export function renderInvocation(inv: InvocationDetail, latest: LatestSteps | null = null): string {
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
  if (inv.waiting) pairs.push(['waiting', waitText(inv.waiting)]);
  if (inv.activeMs) pairs.push(['active', `${formatDuration(inv.activeMs)} run by its attempts that suspended (time waiting does not count)`]);
  if (inv.progress) pairs.push(['progress', `${inv.progress.percent}%${inv.progress.message ? ` ${inv.progress.message}` : ''}`]);
  if (inv.error) pairs.push(['error', errorText(inv)]);
  if (inv.callback) pairs.push(['callback', callbackText(inv.callback)]);
  const lines = [fields(pairs)];
  const response = responseBodyOf(inv.outcome);
  if (response !== undefined) lines.push('', '--- response body ---', json(response));
  if (latest && latest.steps.length > 0) {
    const total = Math.max(inv.steps ?? 0, latest.steps.length);
    lines.push('', total > latest.steps.length ? `--- steps: the latest ${latest.steps.length} of ${total}, newest first ---` : `--- steps: ${total}, newest first ---`, stepTable(latest.steps));
    if (latest.nextBefore) lines.push(`${total - latest.steps.length} more: ${stepsCommand(latest.botId, inv.id, latest.nextBefore)}`);
  }
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

import { MAX_REPLAY_REQUESTS, REPLAY_OUTBOUND } from '@gi/domain';
import type { ReplayOutbound } from '@gi/domain';
import { writeLine } from '../cli-io';
import type { CommandSpec } from '../command';
import type { ReplayView } from '../control-api';
import { formatDuration, json, table } from '../format';
import { botOption, integrationOption } from './shared-options';

export const connectorPublish: CommandSpec = {
  path: ['connector', 'publish'],
  summary: "Publish an integration's draft: it becomes the live version, under the next version number (history is kept)",
  args: [],
  options: { bot: botOption, integration: integrationOption },
  details: 'New calls use it at once; calls in flight finish on the version they started with. Example: gi connector publish --bot shop --integration orders',
  async run(ctx, input) {
    const published = await ctx.control.publishDraft(input.requiredName('bot'), input.requiredName('integration'));
    if (ctx.json) return void writeLine(ctx.io.out, json(published));
    writeLine(ctx.io.out, `Published the draft of ${published.integrationId} on bot ${published.botId}: now live as version ${published.version}`);
  },
};

/** One side's answer in a line: the status and, when it failed, why. */
const answerOf = (side: Pick<ReplayView['replayed'][number]['published'], 'status' | 'error'>) => (side.error ? `${side.status} (${side.error.title})` : side.status);

/** A table of the requests replayed, then the diff of each answer that changed. */
export function formatReplay(report: ReplayView): string {
  if (report.replayed.length === 0) return `Integration ${report.integrationId} has no stored requests to replay.`;
  const rows = report.replayed.map((r) => [
    r.invocationId,
    `v${r.published.version} ${answerOf(r.published)}`,
    `draft ${answerOf(r.draft)}`,
    formatDuration(r.published.durationMs),
    formatDuration(r.draft.durationMs),
    r.diff === '' ? 'same' : 'changed',
  ]);
  const diffs = report.replayed.filter((r) => r.diff !== '').map((r) => `${r.invocationId}:\n${r.diff.replace(/\n$/, '')}`);
  const summary = `${report.replayed.length} request(s) replayed against the draft (outbound HTTP: ${report.outbound}); ${report.changed} answer(s) differ from the live version ${report.publishedVersion}'s.`;
  return [table(['INVOCATION', 'PUBLISHED', 'DRAFT', 'PUBLISHED TIME', 'DRAFT TIME', 'ANSWER'], rows), '', summary, ...diffs.flatMap((d) => ['', d])].join('\n');
}

export const connectorReplay: CommandSpec = {
  path: ['connector', 'replay'],
  summary: 'Re-run stored requests of an integration against its draft and compare each answer with the stored one',
  args: [],
  options: {
    bot: botOption,
    integration: integrationOption,
    draft: { type: 'boolean', required: true, description: 'Replay against the draft (gi connector deploy --draft)' },
    last: { type: 'string', value: 'N', description: `The latest N stored requests (default 10, at most ${MAX_REPLAY_REQUESTS})` },
    ids: { type: 'string', value: 'ID,ID', description: `These invocations instead (comma-separated, at most ${MAX_REPLAY_REQUESTS})` },
    outbound: { type: 'string', value: 'block|send', description: "The draft's outbound HTTP: fails at once (block, the default) or goes to its allowed hosts (send)" },
  },
  details: [
    "The draft runs in the service's sandbox with its limits, its allowed hosts and the integration's secrets.",
    'Replays change no stored invocation, send no callback and count against no quota.',
    'Example: gi connector replay --bot shop --integration orders --draft --last 20 --outbound block',
  ].join('\n'),
  async run(ctx, input) {
    const botId = input.requiredName('bot');
    const integrationId = input.requiredName('integration');
    const last = input.int('last', 1, MAX_REPLAY_REQUESTS);
    const ids = input.list('ids').flatMap((value) => value.split(',')).map((id) => id.trim()).filter((id) => id !== '');
    if (last !== undefined && ids.length > 0) throw input.usage('give either --last or --ids, not both');
    const outbound = input.string('outbound') ?? 'block';
    if (!(REPLAY_OUTBOUND as readonly string[]).includes(outbound)) throw input.usage(`--outbound is ${REPLAY_OUTBOUND.join(' or ')}, not '${outbound}'`);
    const report = await ctx.control.replayDraft(botId, integrationId, {
      ...(last !== undefined && { last }),
      ...(ids.length > 0 && { ids }),
      outbound: outbound as ReplayOutbound,
    });
    if (ctx.json) return void writeLine(ctx.io.out, json(report));
    writeLine(ctx.io.out, formatReplay(report));
  },
};

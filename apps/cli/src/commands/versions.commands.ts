import { writeLine } from '../cli-io';
import type { CommandSpec, OptionSpec } from '../command';
import type { VersionDiffView } from '../control-api';
import { formatTime, json, table } from '../format';
import { botOption, integrationOption } from './shared-options';

const versionOption = (description: string): OptionSpec => ({ type: 'string', required: true, value: 'N', description });
const MAX_VERSION = Number.MAX_SAFE_INTEGER;

export const connectorVersions: CommandSpec = {
  path: ['connector', 'versions'],
  summary: 'List the versions of an integration, newest first (gi connector show --at N shows one)',
  args: [],
  options: { bot: botOption, integration: integrationOption },
  async run(ctx, input) {
    const list = await ctx.control.listVersions(input.requiredName('bot'), input.requiredName('integration'));
    if (ctx.json) return void writeLine(ctx.io.out, json(list));
    const rows = list.versions.map((v) => [String(v.version), formatTime(v.deployedAt), v.version === list.latest ? 'live' : '']);
    // The draft is no version yet: publishing it makes it the next one.
    if (list.draft) rows.unshift(['draft', formatTime(list.draft.draftedAt), 'draft (gi connector replay --draft, gi connector publish)']);
    writeLine(ctx.io.out, table(['VERSION', 'DEPLOYED', ''], rows));
  },
};

/** The diff as `diff -u` prints it: settings first, then the code (or the source files of a bundle, and its bundle). */
export function formatVersionDiff(diff: VersionDiffView): string {
  const show = (value: unknown) => JSON.stringify(value);
  const settings = diff.settings.map((s) => `${s.name}: ${show(s.from)} -> ${show(s.to)}`);
  const parts = [
    settings.length > 0 ? `Settings from version ${diff.from} to ${diff.to}:\n${settings.map((line) => `  ${line}`).join('\n')}` : `Settings: the same in versions ${diff.from} and ${diff.to}`,
    ...diff.sources.map((s) => s.diff.replace(/\n$/, '')),
    diff.code === '' ? 'Code: the same' : diff.sources.length > 0 ? `Bundle:\n${diff.code.replace(/\n$/, '')}` : diff.code.replace(/\n$/, ''),
  ];
  return parts.join('\n\n');
}

export const connectorDiff: CommandSpec = {
  path: ['connector', 'diff'],
  summary: 'Compare two versions of an integration: a unified diff of the code and sources, and the settings that differ',
  args: [],
  options: {
    bot: botOption,
    integration: integrationOption,
    from: versionOption('The version compared from'),
    to: versionOption('The version compared to'),
  },
  details: 'Settings compared: entity, pool, timeout, each limit, allowed hosts and callback URL. Example: gi connector diff --bot shop --integration orders --from 3 --to 4',
  async run(ctx, input) {
    const from = input.int('from', 1, MAX_VERSION) as number;
    const to = input.int('to', 1, MAX_VERSION) as number;
    const diff = await ctx.control.diffVersions(input.requiredName('bot'), input.requiredName('integration'), from, to);
    if (ctx.json) return void writeLine(ctx.io.out, json(diff));
    writeLine(ctx.io.out, formatVersionDiff(diff));
  },
};

export const connectorRollback: CommandSpec = {
  path: ['connector', 'rollback'],
  summary: "Deploy an earlier version's code, sources and settings again, as a new version (history is kept)",
  args: [],
  options: { bot: botOption, integration: integrationOption, to: versionOption('The version deployed again') },
  details: 'New calls use the new version at once; calls in flight finish on the version they started with. Example: gi connector rollback --bot shop --integration orders --to 3',
  async run(ctx, input) {
    const to = input.int('to', 1, MAX_VERSION) as number;
    const deployed = await ctx.control.rollback(input.requiredName('bot'), input.requiredName('integration'), to);
    if (ctx.json) return void writeLine(ctx.io.out, json(deployed));
    writeLine(ctx.io.out, `Rolled back ${deployed.integrationId} on bot ${deployed.botId} to version ${to}'s code and settings: now version ${deployed.version}`);
  },
};

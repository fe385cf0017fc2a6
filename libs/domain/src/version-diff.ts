import type { IntegrationDefinition } from './catalog';
import { inboundAuthOf } from './inbound-auth';
import { DiffBudget, diffLines, splitLines, unifiedText, type DiffLabels } from './line-diff';

/** One setting that differs between two versions (limits one by one, as `limits.memoryMiB`). */
export interface SettingChange {
  name: string;
  from: unknown;
  to: unknown;
}

/** What changed from one version of an integration to another. */
export interface VersionDiff {
  from: number;
  to: number;
  /** Unified diff of the code the sandbox runs; empty when it is the same. */
  code: string;
  /** Unified diff per source file that differs (a file one side lacks is diffed against nothing). */
  sources: Array<{ path: string; diff: string }>;
  settings: SettingChange[];
}

/** What a diff compares of a version. */
export type Versioned = Pick<IntegrationDefinition, 'version' | 'code' | 'sources' | 'entityName' | 'pool' | 'timeoutSeconds' | 'allowedHosts' | 'limits' | 'callbackUrl' | 'inboundAuth'>;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The settings compared, in the order they are shown. */
function settingsOf(v: Versioned): Array<[string, unknown]> {
  return [
    ['entityName', v.entityName],
    ['pool', v.pool],
    ['timeoutSeconds', v.timeoutSeconds],
    ...Object.entries(v.limits).map(([name, value]): [string, unknown] => [`limits.${name}`, value]),
    ['allowedHosts', v.allowedHosts],
    ['callbackUrl', v.callbackUrl],
    ['inboundAuth', inboundAuthOf(v)],
  ];
}

/** The event loop's other work goes first between two steps of a diff (see diffVersions). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** One file's unified diff, in three steps with the event loop's other work between them. */
async function fileDiff(before: string, after: string, labels: DiffLabels, budget: DiffBudget): Promise<string> {
  await nextTurn();
  const lines = [splitLines(before), splitLines(after)] as const;
  await nextTurn();
  const edits = diffLines(lines[0], lines[1], budget);
  await nextTurn();
  return unifiedText(edits, labels);
}

/**
 * One request's diff: the code and every source file share one DiffBudget, so its search is bounded
 * whatever they hold, and other requests are served between one step of a file and the next.
 */
export async function diffVersions(from: Versioned, to: Versioned, budget: DiffBudget = new DiffBudget()): Promise<VersionDiff> {
  const label = (v: Versioned, path: string) => `v${v.version}/${path}`;
  // The code first: what runs is what most readers look for, so it has the budget first.
  const code = await fileDiff(from.code, to.code, { before: label(from, 'code'), after: label(to, 'code') }, budget);
  const fromSources = new Map((from.sources ?? []).map((s) => [s.path, s.content]));
  const toSources = new Map((to.sources ?? []).map((s) => [s.path, s.content]));
  const paths = [...new Set([...fromSources.keys(), ...toSources.keys()])];
  const sources: VersionDiff['sources'] = [];
  for (const path of paths) {
    const diff = await fileDiff(fromSources.get(path) ?? '', toSources.get(path) ?? '', { before: label(from, path), after: label(to, path) }, budget);
    if (diff !== '') sources.push({ path, diff });
  }
  const toSettings = new Map(settingsOf(to));
  const settings = settingsOf(from)
    .map(([name, value]) => ({ name, from: value, to: toSettings.get(name) }))
    .filter((change) => !same(change.from, change.to));
  return { from: from.version, to: to.version, code, sources, settings };
}

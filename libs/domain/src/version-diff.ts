import type { IntegrationDefinition } from './catalog';
import { inboundAuthOf } from './inbound-auth';
import { unifiedDiff } from './line-diff';

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

type Versioned = Pick<IntegrationDefinition, 'version' | 'code' | 'sources' | 'entityName' | 'pool' | 'timeoutSeconds' | 'allowedHosts' | 'limits' | 'callbackUrl' | 'inboundAuth'>;

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

export function diffVersions(from: Versioned, to: Versioned): VersionDiff {
  const label = (v: Versioned, path: string) => `v${v.version}/${path}`;
  const fromSources = new Map((from.sources ?? []).map((s) => [s.path, s.content]));
  const toSources = new Map((to.sources ?? []).map((s) => [s.path, s.content]));
  const paths = [...new Set([...fromSources.keys(), ...toSources.keys()])];
  const sources = paths
    .map((path) => ({ path, diff: unifiedDiff(fromSources.get(path) ?? '', toSources.get(path) ?? '', { before: label(from, path), after: label(to, path) }) }))
    .filter((file) => file.diff !== '');
  const toSettings = new Map(settingsOf(to));
  const settings = settingsOf(from)
    .map(([name, value]) => ({ name, from: value, to: toSettings.get(name) }))
    .filter((change) => !same(change.from, change.to));
  return { from: from.version, to: to.version, code: unifiedDiff(from.code, to.code, { before: label(from, 'code'), after: label(to, 'code') }), sources, settings };
}

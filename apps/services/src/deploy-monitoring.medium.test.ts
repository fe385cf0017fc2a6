import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { createMetrics } from '@gi/observability';
import { itWhere } from '@gi/testing';

/**
 * deploy/: the Grafana dashboard, the Prometheus alert rules and the operator's resources query only
 * metrics the services expose; `promtool check rules` (Debian package `prometheus`) checks the rules and
 * the dashboard's queries when installed.
 */

const ROOT = join(__dirname, '../../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

type Rule = { alert: string; expr: string; labels?: Record<string, string>; annotations?: Record<string, string> };
type Groups = { groups: Array<{ name: string; rules: Rule[] }> };
type Panel = { title: string; targets: Array<{ expr: string }> };

const alertRules = parse(read('deploy/prometheus/gi-alerts.yaml')) as Groups;
const dashboard = JSON.parse(read('deploy/grafana/generic-integration.dashboard.json')) as { panels: Panel[] };
const dashboardQueries = dashboard.panels.flatMap((panel) => panel.targets.map((target) => ({ panel: panel.title, expr: target.expr })));

/** Every series name a process exposes: counters and gauges as named, histograms by their three series. */
function exposedNames(): Set<string> {
  const names = new Set<string>();
  for (const metric of createMetrics().registry.getMetricsAsArray()) {
    const { name, type } = metric as unknown as { name: string; type: string };
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    else names.add(name);
  }
  return names;
}

/** The metric names a PromQL expression reads (ours and the library's defaults). */
const metricsIn = (expr: string) => expr.match(/\b(?:gi|nodejs|process)_[a-z0-9_]+\b/g) ?? [];

const itWithPromtool = itWhere({
  suite: 'promtool',
  what: 'promtool check of the alert rules and dashboard queries',
  unavailable: spawnSync('promtool', ['--version']).status === 0 ? undefined : 'promtool is not installed (Debian package prometheus)',
});

describe('deploy/ monitoring', () => {
  const exposed = exposedNames();

  it('every alert and dashboard query names metrics the services expose', () => {
    const queries = [...alertRules.groups.flatMap((group) => group.rules.map((rule) => ({ panel: rule.alert, expr: rule.expr }))), ...dashboardQueries];
    expect(queries.length).toBeGreaterThan(20);
    for (const { panel, expr } of queries) {
      const names = metricsIn(expr);
      expect([panel, names.length > 0]).toEqual([panel, true]);
      for (const name of names) expect([panel, name, exposed.has(name)]).toEqual([panel, name, true]);
    }
  });

  it('every alert has a severity and a summary', () => {
    for (const rule of alertRules.groups.flatMap((group) => group.rules)) {
      expect([rule.alert, ['page', 'ticket'].includes(rule.labels?.severity ?? '')]).toEqual([rule.alert, true]);
      expect([rule.alert, typeof rule.annotations?.summary]).toEqual([rule.alert, 'string']);
    }
  });

  it('the PrometheusRule holds the same groups as the rule file; the monitors scrape /metrics on port http', () => {
    const resource = parse(read('deploy/k8s/monitoring/prometheusrule.yaml')) as { kind: string; spec: Groups };
    expect(resource.kind).toBe('PrometheusRule');
    expect(resource.spec).toEqual(alertRules);
    const serviceMonitor = parse(read('deploy/k8s/monitoring/servicemonitor.yaml')) as { kind: string; spec: { selector: unknown; endpoints: Array<{ port: string; path: string }> } };
    expect(serviceMonitor.kind).toBe('ServiceMonitor');
    expect(serviceMonitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'http', path: '/metrics' })]);
    const podMonitor = parse(read('deploy/k8s/monitoring/podmonitor.yaml')) as { kind: string; spec: { podMetricsEndpoints: Array<{ port: string; path: string }> } };
    expect(podMonitor.kind).toBe('PodMonitor');
    expect(podMonitor.spec.podMetricsEndpoints).toEqual([expect.objectContaining({ port: 'http', path: '/metrics' })]);
    // The Services and the executor pods name their port as the monitors do.
    for (const file of ['gateway', 'results', 'control', 'executor-default', 'executor-bulk']) expect(read(`deploy/k8s/base/${file}.yaml`)).toMatch(/- name: http\n\s+containerPort: 8080/);
  });

  itWithPromtool('promtool checks the alert rules and the dashboard queries', () => {
    const rules = spawnSync('promtool', ['check', 'rules', join(ROOT, 'deploy/prometheus/gi-alerts.yaml')], { encoding: 'utf8' });
    expect([rules.status, rules.stderr]).toEqual([0, '']);
    // The dashboard's queries as recording rules, with Grafana's variables filled in: promtool parses each.
    const dir = mkdtempSync(join(tmpdir(), 'gi-dashboard-'));
    try {
      const asRules = {
        groups: [
          {
            name: 'dashboard',
            rules: dashboardQueries.map(({ expr }, i) => ({ record: `dashboard:query_${i}`, expr: expr.replaceAll('$__rate_interval', '5m').replaceAll('$job', '.*') })),
          },
        ],
      };
      writeFileSync(join(dir, 'dashboard.rules.yaml'), stringify(asRules));
      const queries = spawnSync('promtool', ['check', 'rules', join(dir, 'dashboard.rules.yaml')], { encoding: 'utf8' });
      expect([queries.status, queries.stderr]).toEqual([0, '']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

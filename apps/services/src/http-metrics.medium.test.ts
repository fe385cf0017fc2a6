import { spawnSync } from 'node:child_process';
import { sendRawInProcess } from '@gi/http';
import { itWhere } from '@gi/testing';
import { ServicesFixture } from './services.fixture';

/**
 * `gi_http_request_duration_seconds` as an operator reads it: every documented status a call can get
 * is sent to the embedded service and read back from its own `/metrics`, under the route template and
 * method of the call (408 takes the same path as 431: Node's clientError, counted as route `unmatched`). `promtool check metrics` (Debian package `prometheus`) lints our series when installed.
 */

const WEBHOOK = '/api/Platform/:botId/:entityName/:integrationId/GenericIntegration';
const POLL = '/api/Platform/:botId/GetGenericIntegrationResponse';

/** `count` of each series of the HTTP histogram, keyed `method route status`. */
function httpCounts(exposition: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of exposition.split('\n')) {
    const match = /^gi_http_request_duration_seconds_count\{(.*)\} (\d+)$/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries([...match[1].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    counts.set(`${labels.method} ${labels.route} ${labels.status}`, Number(match[2]));
  }
  return counts;
}

const itWithPromtool = itWhere({
  suite: 'promtool',
  what: 'promtool check metrics of the exposition',
  unavailable: spawnSync('promtool', ['--version']).status === 0 ? undefined : 'promtool is not installed (Debian package prometheus)',
});

describe('HTTP metrics of the embedded service', () => {
  let fixture: ServicesFixture;
  let token: string;
  let otherToken: string;
  let limitedToken: string;

  beforeAll(async () => {
    fixture = await new ServicesFixture({ SYNC_TIMEOUT_SECONDS: '1', MAX_BODY_SIZE: '1kb' }).start();
    ({ token } = await fixture.setUpBot('acme'));
    ({ token: otherToken } = await fixture.setUpBot('zeta'));
    ({ token: limitedToken } = await fixture.setUpBot('limited'));
    await fixture.admin('PUT', '/bots/limited/quotas', { ratePerSecond: 0.01, burst: 1 });
  });
  afterAll(() => fixture.close());

  it('counts each documented status under its route template and method', async () => {
    const service = fixture.service('embedded');
    const webhook = (integration: string, query = '') => `/api/Platform/acme/Order/${integration}/GenericIntegration${query}`;
    const json = (headers: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers });
    const expectStatus = async (status: number, request: Parameters<typeof service.call>[0]) => {
      const reply = await service.call(request);
      expect([request.method, request.path, reply.status]).toEqual([request.method, request.path, status]);
      return reply;
    };

    await expectStatus(200, { method: 'GET', path: '/healthz' });
    const accepted = await expectStatus(202, { method: 'POST', path: webhook('ack', '?asyncResponse=true'), headers: json({ 'idempotency-key': 'k1' }), body: '{"a":1}' });
    const invocationId = (JSON.parse(accepted.body) as { invocationId: string }).invocationId;
    await expectStatus(409, { method: 'POST', path: webhook('ack', '?asyncResponse=true'), headers: json({ 'idempotency-key': 'k1' }), body: '{"a":1}' });
    await expectStatus(422, { method: 'POST', path: webhook('ack', '?asyncResponse=true'), headers: json({ 'idempotency-key': 'k1' }), body: '{"a":2}' });
    await expectStatus(400, { method: 'POST', path: webhook('ack'), headers: json(), body: '{not json' });
    await expectStatus(401, { method: 'POST', path: webhook('ack'), headers: { 'content-type': 'application/json' }, body: '{}' });
    await expectStatus(403, { method: 'POST', path: webhook('ack'), headers: json({ authorization: `Bearer ${otherToken}` }), body: '{}' });
    await expectStatus(404, { method: 'POST', path: '/api/Platform/acme/nowhere', headers: json(), body: '{}' });
    await expectStatus(405, { method: 'GET', path: webhook('ack'), headers: json() });
    await expectStatus(413, { method: 'POST', path: webhook('ack'), headers: json(), body: JSON.stringify({ big: 'x'.repeat(2048) }) });
    await expectStatus(415, { method: 'POST', path: webhook('ack'), headers: json({ 'content-type': 'image/png' }), body: 'png' });
    await expectStatus(504, { method: 'POST', path: webhook('ack'), headers: json(), body: '{}' });
    // A burst of one: the first call takes it, the next is refused.
    const limited = { method: 'POST', path: '/api/Platform/limited/Order/ack/GenericIntegration?asyncResponse=true', headers: json({ authorization: `Bearer ${limitedToken}` }), body: '{}' };
    await expectStatus(202, limited);
    await expectStatus(429, limited);
    const poll = (query: string) => ({ method: 'GET', path: `/api/Platform/acme/GetGenericIntegrationResponse${query}`, headers: { authorization: `Bearer ${token}` } });
    await expectStatus(400, poll(''));
    await expectStatus(404, poll('?invocationId=unknown-id'));
    await expectStatus(202, poll(`?invocationId=${invocationId}&waitSeconds=0`));
    await expectStatus(200, { ...poll(`?invocationId=${invocationId}`), method: 'DELETE' });
    await expectStatus(410, poll(`?invocationId=${invocationId}`));
    expect(await sendRawInProcess(service.server, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)).toMatch(/^HTTP\/1\.1 431/);

    const exposition = (await expectStatus(200, { method: 'GET', path: '/metrics' })).body;
    const counts = httpCounts(exposition);
    const expected: Array<[string, number]> = [
      [`GET /healthz 200`, 1],
      [`POST ${WEBHOOK} 202`, 2],
      [`POST ${WEBHOOK} 400`, 1],
      [`POST ${WEBHOOK} 401`, 1],
      [`POST ${WEBHOOK} 403`, 1],
      [`POST ${WEBHOOK} 409`, 1],
      [`POST ${WEBHOOK} 413`, 1],
      [`POST ${WEBHOOK} 415`, 1],
      [`POST ${WEBHOOK} 422`, 1],
      [`POST ${WEBHOOK} 429`, 1],
      [`POST ${WEBHOOK} 504`, 1],
      [`GET ${WEBHOOK} 405`, 1],
      [`POST unmatched 404`, 1],
      [`GET ${POLL} 400`, 1],
      [`GET ${POLL} 404`, 1],
      [`GET ${POLL} 202`, 1],
      [`DELETE ${POLL} 200`, 1],
      [`GET ${POLL} 410`, 1],
      [`unknown unmatched 431`, 1],
    ];
    for (const [series, count] of expected) expect([series, counts.get(series)]).toEqual([series, count]);
    // No raw path, id or token ever becomes a label value.
    for (const value of ['/api/Platform/acme', invocationId, 'nowhere', 'unknown-id']) expect(exposition).not.toContain(value);
  }, 20_000);

  itWithPromtool('passes promtool check metrics on every gi_ series', async () => {
    const exposition = (await fixture.service('embedded').call({ method: 'GET', path: '/metrics' })).body;
    const ours = exposition
      .split('\n')
      .filter((line) => /^(# (HELP|TYPE) )?gi_/.test(line))
      .join('\n');
    const check = spawnSync('promtool', ['check', 'metrics'], { input: `${ours}\n`, encoding: 'utf8' });
    expect(`${check.stdout}${check.stderr}`.trim()).toBe('');
    expect(check.status).toBe(0);
  });

  itWithPromtool("names the library's default series that promtool flags (documented in docs/operations.md)", async () => {
    const exposition = (await fixture.service('embedded').call({ method: 'GET', path: '/metrics' })).body;
    const check = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
    const flagged = [...new Set(`${check.stdout}${check.stderr}`.split('\n').filter(Boolean).map((line) => line.split(' ')[0]))].sort();
    expect(flagged.every((name) => /^(nodejs|process)_/.test(name))).toBe(true);
  });
});

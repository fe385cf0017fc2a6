import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliEnv } from '@gi/config';
import { captureIo, FakeService, problem } from './fake-service.fixture';
import { runCli } from './run-cli';

const ADMIN = 'admin-secret-0123456789abcdef';
const noUp = async () => {
  throw new Error('not in tests');
};
const at = '2026-01-01T00:00:00.000Z';
const integration = { botId: 'acme', integrationId: 'ack', entityName: 'Order', pool: 'default', timeoutSeconds: 60, allowedHosts: [], deployedAt: at };
const replayed = {
  integrationId: 'ack',
  publishedVersion: 1,
  draftedAt: at,
  outbound: 'block',
  changed: 1,
  replayed: [
    {
      invocationId: 'inv-2',
      createdAt: at,
      published: { version: 1, status: 'Completed', responseBody: { total: 2 }, error: null, durationMs: 12 },
      draft: { status: 'Completed', responseBody: { total: 4 }, error: null, durationMs: 5, logs: [] },
      diff: '--- published v1\n+++ draft\n@@ -1,3 +1,3 @@\n {\n-  "total": 2\n+  "total": 4\n }\n',
    },
    {
      invocationId: 'inv-1',
      createdAt: at,
      published: { version: 1, status: 'Completed', responseBody: { total: 0 }, error: null, durationMs: 9 },
      draft: { status: 'Completed', responseBody: { total: 0 }, error: null, durationMs: 4, logs: [] },
      diff: '',
    },
  ],
};

describe('drafts on the command line', () => {
  let service: FakeService;
  beforeAll(async () => {
    service = await FakeService.start();
  });
  afterAll(() => service.close());
  beforeEach(() => service.reset());

  async function gi(argv: string[], env: CliEnv = { GI_URL: service.url, GI_ADMIN_TOKEN: ADMIN }) {
    const io = captureIo();
    const code = await runCli(argv, io, env, noUp);
    return { code, out: io.stdout(), err: io.stderr() };
  }

  it('deploys a draft with connector deploy --draft, saying the live version stays', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gi-draft-')), 'connector.js');
    writeFileSync(file, 'Context.SetResponseEntity({ ResponseBody: 2 });\n');
    service.on('PUT', '/admin/bots/acme/integrations/ack/draft', { status: 200, json: { ...integration, deployedAt: undefined, draft: true, liveVersion: 1, draftedAt: at } });
    const result = await gi(['connector', 'deploy', file, '--bot', 'acme', '--integration', 'ack', '--entity', 'Order', '--draft']);
    expect(result).toMatchObject({ code: 0, out: expect.stringMatching(/^Deployed a draft of ack on bot acme \(version 1 stays live until gi connector publish\): entity Order/) });
    expect(JSON.parse(service.requestsTo('PUT', '/admin/bots/acme/integrations/ack/draft')[0].body)).toMatchObject({ entityName: 'Order', code: expect.stringContaining('ResponseBody: 2') });
    expect(service.requestsTo('PUT', '/admin/bots/acme/integrations/ack')).toEqual([]);
  });

  it('lists the draft above the versions', async () => {
    service.on('GET', '/admin/bots/acme/integrations/ack/versions', { status: 200, json: { integrationId: 'ack', latest: 1, versions: [{ version: 1, deployedAt: at }], draft: { draftedAt: at } } });
    const lines = (await gi(['connector', 'versions', '--bot', 'acme', '--integration', 'ack'])).out.split('\n');
    expect(lines[1]).toMatch(/^draft\s+\S.*draft \(gi connector replay --draft, gi connector publish\)$/);
    expect(lines[2]).toMatch(/^1\s+\S.*live$/);
  });

  it('replays: a table of both answers and timings, then the diff of each answer that changed', async () => {
    service.on('POST', '/admin/bots/acme/integrations/ack/replay', { status: 200, json: replayed });
    const result = await gi(['connector', 'replay', '--bot', 'acme', '--integration', 'ack', '--draft', '--last', '2']);
    expect(result.code).toBe(0);
    const lines = result.out.split('\n');
    expect(lines[0]).toMatch(/^INVOCATION\s+PUBLISHED\s+DRAFT\s+PUBLISHED TIME\s+DRAFT TIME\s+ANSWER$/);
    expect(lines[1]).toMatch(/^inv-2\s+v1 Completed\s+draft Completed\s+12 ms\s+5 ms\s+changed$/);
    expect(lines[2]).toMatch(/^inv-1\s+.*same$/);
    expect(result.out).toContain("2 request(s) replayed against the draft (outbound HTTP: block); 1 answer(s) differ from the live version 1's.");
    expect(result.out).toContain('inv-2:\n--- published v1\n+++ draft\n@@ -1,3 +1,3 @@\n {\n-  "total": 2\n+  "total": 4\n }\n');
    expect(JSON.parse(service.requestsTo('POST', '/admin/bots/acme/integrations/ack/replay')[0].body)).toEqual({ last: 2, outbound: 'block' });
  });

  it('replays chosen invocations with outbound sent, and prints the full result with --json', async () => {
    service.on('POST', '/admin/bots/acme/integrations/ack/replay', { status: 200, json: replayed });
    const result = await gi(['--json', 'connector', 'replay', '--bot', 'acme', '--integration', 'ack', '--draft', '--ids', 'inv-2,inv-1', '--outbound', 'send']);
    expect(JSON.parse(result.out)).toEqual(replayed);
    expect(JSON.parse(service.requestsTo('POST', '/admin/bots/acme/integrations/ack/replay')[0].body)).toEqual({ ids: ['inv-2', 'inv-1'], outbound: 'send' });
  });

  it('refuses a replay without --draft, with both --last and --ids, a bad --outbound or more than 50 requests (usage, 2)', async () => {
    const base = ['connector', 'replay', '--bot', 'acme', '--integration', 'ack'];
    expect(await gi(base)).toMatchObject({ code: 2, err: expect.stringContaining('missing --draft') });
    expect(await gi([...base, '--draft', '--last', '2', '--ids', 'a'])).toMatchObject({ code: 2, err: expect.stringContaining('either --last or --ids') });
    expect(await gi([...base, '--draft', '--outbound', 'maybe'])).toMatchObject({ code: 2, err: expect.stringContaining('--outbound is block or send') });
    expect(await gi([...base, '--draft', '--last', '51'])).toMatchObject({ code: 2, err: expect.stringContaining('from 1 to 50') });
    expect(service.requestsTo('POST', '/admin/bots/acme/integrations/ack/replay')).toEqual([]);
  });

  it('publishes the draft, and reports a missing draft as a problem document with --json', async () => {
    service.on('POST', '/admin/bots/acme/integrations/ack/publish', { status: 200, json: { ...integration, version: 2, publishedDraftAt: at } });
    expect(await gi(['connector', 'publish', '--bot', 'acme', '--integration', 'ack'])).toEqual({ code: 0, out: 'Published the draft of ack on bot acme: now live as version 2\n', err: '' });
    service.on('POST', '/admin/bots/acme/integrations/ack/publish', problem(404, 'Not found', "Integration 'ack' of bot 'acme' has no draft; deploy one first (gi connector deploy --draft)."));
    const missing = await gi(['--json', 'connector', 'publish', '--bot', 'acme', '--integration', 'ack']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.out)).toMatchObject({ status: 404, detail: expect.stringContaining('has no draft'), exitCode: 1 });
  });
});

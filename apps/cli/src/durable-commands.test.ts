import { cliAgainstFakeService, FAKE_ADMIN_TOKEN, problem } from './fake-service.fixture';

/** `gi invocations` on durable jobs: the wait and the steps in `show`, `steps` page by page, `event` through the public URL. */
describe('gi invocations on durable jobs', () => {
  const cli = cliAgainstFakeService();
  const { gi } = cli;
  const DETAIL = '/admin/bots/acme/invocations/inv1';
  const STEPS = '/admin/bots/acme/invocations/inv1/steps';
  const EVENT = '/api/Platform/acme/GenericIntegrationEvent';

  const waiting = {
    id: 'inv1', integrationId: 'campaign', entityName: 'Order', mode: 'async', status: 'Waiting', attempt: 2,
    createdAt: '2026-01-01T00:00:00.000Z', startedAt: '2026-01-01T00:00:01.000Z', finishedAt: null, durationMs: null, error: null,
    outcome: null, progress: { percent: 40, message: '80 sent' }, logs: [],
    waiting: { for: 'event', name: 'approved', until: '2026-01-02T00:00:00.000Z' }, steps: 120, activeMs: 3200,
  };
  const step = (occurrence: number, overrides: Record<string, unknown> = {}) => ({
    name: 'send', occurrence, kind: 'step', status: 'done', attempts: 1,
    startedAt: '2026-01-01T00:00:02.000Z', finishedAt: '2026-01-01T00:00:02.250Z', durationMs: 250, until: null, resultBytes: 1536, error: null,
    ...overrides,
  });
  const eventWait = step(1, { name: 'approved', kind: 'event', status: 'waiting', attempts: 0, finishedAt: null, durationMs: null, until: '2026-01-02T00:00:00.000Z', resultBytes: 0 });

  describe('show', () => {
    it('prints what the job waits for and until when, its active time, and its latest steps with how to list the rest', async () => {
      cli.service.on('GET', DETAIL, { status: 200, json: waiting });
      cli.service.on('GET', STEPS, { status: 200, json: { steps: [eventWait, step(2), step(1, { status: 'failed', attempts: 3, resultBytes: 0, error: { name: 'Error', message: 'HTTP 503' } })], nextBefore: "1_send 'x'" } });
      const result = await gi(['invocations', 'show', '--bot', 'acme', 'inv1']);
      expect(result.code).toBe(0);
      expect(Object.fromEntries(cli.service.requestsTo('GET', STEPS)[0].query)).toEqual({ limit: '50' });
      expect(result.out).toBe(
        [
          'invocation   inv1',
          'integration  campaign',
          'entity       Order',
          'mode         async',
          'status       Waiting',
          'attempt      2',
          'created      2026-01-01 00:00:00Z',
          'started      2026-01-01 00:00:01Z',
          'finished     -',
          'duration     -',
          'waiting      event "approved" until 2026-01-02 00:00:00Z',
          'active       3.2 s run by its attempts that suspended (time waiting does not count)',
          'progress     40% 80 sent',
          '',
          '--- steps: the latest 3 of 120, newest first ---',
          'STEP        KIND   STATUS   ATTEMPTS  DURATION  RESULT   DETAIL',
          'approved#1  event  waiting  -         -         -        until 2026-01-02 00:00:00Z',
          'send#2      step   done     1         250 ms    1.5 KiB',
          'send#1      step   failed   3         250 ms    -        Error: HTTP 503',
          "117 more: gi invocations steps --bot acme inv1 --before '1_send '\\''x'\\'''",
          '',
          '--- no logs yet ---',
          '',
        ].join('\n'),
      );
    });

    it('says when every step is shown, and asks for no steps of a run that made none', async () => {
      cli.service.on('GET', DETAIL, { status: 200, json: { ...waiting, steps: 1, waiting: { for: 'retry', name: 'fetch', until: '2026-01-01T00:01:00.000Z' } } });
      cli.service.on('GET', STEPS, { status: 200, json: { steps: [step(1, { name: 'fetch', status: 'retrying', finishedAt: null, durationMs: null, until: '2026-01-01T00:01:00.000Z', error: { name: 'Error', message: 'HTTP 429' } })], nextBefore: null } });
      const shown = await gi(['invocations', 'show', '--bot', 'acme', 'inv1']);
      expect(shown.out).toContain('waiting      the next attempt of step "fetch" until 2026-01-01 00:01:00Z\n');
      expect(shown.out).toContain('--- steps: 1, newest first ---\n');
      expect(shown.out).toContain('fetch#1  step  retrying  1         -         -       next attempt 2026-01-01 00:01:00Z; Error: HTTP 429\n');
      expect(shown.out).not.toContain('more:');

      cli.service.reset();
      cli.service.on('GET', DETAIL, { status: 200, json: { ...waiting, status: 'Running', waiting: null, steps: 0, activeMs: 0 } });
      const plain = await gi(['invocations', 'show', '--bot', 'acme', 'inv1']);
      expect(plain.code).toBe(0);
      expect(plain.out).not.toMatch(/waiting|active|steps/);
      expect(cli.service.requestsTo('GET', STEPS)).toHaveLength(0);
    });

    it("shows control characters in a step's name and error as inert text, one line per step", async () => {
      cli.service.on('GET', DETAIL, { status: 200, json: { ...waiting, steps: 1, waiting: { for: 'sleep', name: 'pause\u001b]52;c;aGk=\u0007', until: '2026-01-02T00:00:00.000Z' } } });
      cli.service.on('GET', STEPS, {
        status: 200,
        json: { steps: [step(1, { name: 'send\u001b[2J', status: 'failed', error: { name: 'Error\u009b', message: 'line one\nline two\r\u001b[31mred' } })] },
      });
      const result = await gi(['invocations', 'show', '--bot', 'acme', 'inv1']);
      expect(result.out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
      expect(result.out).toContain('waiting      sleep "pause\\x1b]52;c;aGk=\\x07" until');
      expect(result.out).toContain('send\\x1b[2J#1  step  failed  1         250 ms    -       Error\\x9b: line one\\x0aline two\\x0d\\x1b[31mred\n');
    });
  });

  describe('steps', () => {
    it('lists a page of steps, passes --limit and --before on, and tells how to ask for the next page', async () => {
      cli.service.on('GET', STEPS, { status: 200, json: { steps: [step(2), step(1)], nextBefore: '1_send' } });
      const result = await gi(['invocations', 'steps', '--bot', 'acme', 'inv1', '--limit', '2', '--before', '3_send']);
      expect(result).toEqual({
        code: 0,
        out: ['STEP    KIND  STATUS  ATTEMPTS  DURATION  RESULT   DETAIL', 'send#2  step  done    1         250 ms    1.5 KiB', 'send#1  step  done    1         250 ms    1.5 KiB', ''].join('\n'),
        err: 'More: gi invocations steps --bot acme inv1 --before 1_send --limit 2\n',
      });
      expect(Object.fromEntries(cli.service.requests[0].query)).toEqual({ limit: '2', before: '3_send' });
    });

    it('prints the page as the service sent it with --json, and says when there are none', async () => {
      const page = { steps: [eventWait], nextBefore: null };
      cli.service.on('GET', STEPS, { status: 200, json: page });
      expect(JSON.parse((await gi(['invocations', 'steps', '--bot', 'acme', 'inv1', '--json'])).out)).toEqual(page);
      cli.service.on('GET', STEPS, { status: 200, json: { steps: [], nextBefore: null } });
      expect(await gi(['invocations', 'steps', '--bot', 'acme', 'inv1'])).toEqual({
        code: 0,
        out: '',
        err: 'No steps: invocation inv1 has journalled none (Context.Step, Context.Sleep, Context.WaitForEvent)\n',
      });
    });

    it("refuses a limit out of bounds before calling the service, and passes the service's 404 on", async () => {
      expect(await gi(['invocations', 'steps', '--bot', 'acme', 'inv1', '--limit', '501'])).toMatchObject({ code: 2, err: expect.stringContaining('--limit must be a whole number from 1 to 500') });
      expect(cli.service.requests).toHaveLength(0);
      cli.service.on('GET', STEPS, problem(404, 'Not found', "No invocation 'inv1' for bot 'acme'."));
      expect(await gi(['invocations', 'steps', '--bot', 'acme', 'inv1'])).toMatchObject({ code: 1, err: expect.stringContaining("No invocation 'inv1' for bot 'acme'.") });
    });
  });

  describe('list', () => {
    it('filters by the Waiting status, in any case', async () => {
      cli.service.on('GET', '/admin/bots/acme/invocations', { status: 200, json: { invocations: [waiting], nextBefore: null } });
      const result = await gi(['invocations', 'list', '--bot', 'acme', '--status', 'waiting']);
      expect(Object.fromEntries(cli.service.requests[0].query)).toEqual({ status: 'Waiting' });
      expect(result.out.split('\n')[1]).toMatch(/^inv1\s+campaign\s+Order\s+async\s+Waiting\s+2\s/);
    });
  });

  describe('event', () => {
    const root = () => `${cli.service.url}/api/Platform/acme`;
    function serve(reply: { status: number; json?: unknown; text?: string; headers?: Record<string, string> }) {
      cli.service
        .on('GET', '/admin/bots/acme/webhook', { status: 200, json: { baseUrl: cli.service.url, botId: 'acme', eventUrl: `${root()}/GenericIntegrationEvent?invocationId={invocationId}&name={name}`, integrations: [] } })
        .on('POST', '/admin/bots/acme/tokens', { status: 201, json: { token: 'minted-bot-token', tokenId: 'tk1', expiresAt: null } })
        .on('POST', EVENT, reply);
    }

    it('sends the payload to the event URL with a token it mints, and says the job resumed', async () => {
      serve({ status: 202, json: { invocationId: 'inv 1', name: 'approved by', status: 'resumed' } });
      const result = await gi(['invocations', 'event', '--bot', 'acme', 'inv 1', '--name', 'approved by', '--body', '{"by":"ada"}']);
      expect(result).toEqual({ code: 0, out: 'Event "approved by" resumed invocation inv 1 of bot acme\n', err: '' });
      const [sent] = cli.service.requestsTo('POST', EVENT);
      expect(Object.fromEntries(sent.query)).toEqual({ invocationId: 'inv 1', name: 'approved by' });
      expect(sent.headers.authorization).toBe('Bearer minted-bot-token');
      expect(sent.headers['content-type']).toBe('application/json');
      expect(sent.body).toBe('{"by":"ada"}');
      expect(JSON.parse(cli.service.requestsTo('POST', '/admin/bots/acme/tokens')[0].body)).toEqual({ ttlSeconds: 600, label: 'cli event' });
    });

    it('says an early event is kept for the next wait, and prints the receipt with --json', async () => {
      serve({ status: 202, json: { invocationId: 'inv1', name: 'approved', status: 'kept' } });
      expect((await gi(['invocations', 'event', '--bot', 'acme', 'inv1', '--name', 'approved', '--body', 'null'])).out).toBe(
        'Event "approved" kept for invocation inv1 of bot acme: it does not wait for it yet, its next wait for "approved" takes it\n',
      );
      expect(JSON.parse((await gi(['invocations', 'event', '--bot', 'acme', 'inv1', '--name', 'approved', '--body', '1', '--json'])).out)).toEqual({ invocationId: 'inv1', name: 'approved', status: 'kept' });
    });

    it('sends text with its type, and a file', async () => {
      serve({ status: 202, json: { invocationId: 'inv1', name: 'report', status: 'resumed' } });
      await gi(['invocations', 'event', '--bot', 'acme', 'inv1', '--name', 'report', '--body', 'delivered', '--content-type', 'text/plain']);
      await gi(['invocations', 'event', '--bot', 'acme', 'inv1', '--name', 'report', '--body-file', '/nonexistent/report.json']).then((r) => expect(r).toMatchObject({ code: 1, err: expect.stringContaining('--body-file: cannot read /nonexistent/report.json: no such file') }));
      const [text] = cli.service.requestsTo('POST', EVENT);
      expect([text.headers['content-type'], text.body]).toEqual(['text/plain', 'delivered']);
    });

    it('with --token and no admin token, sends it under --url without asking the control API', async () => {
      serve({ status: 202, json: { invocationId: 'inv1', name: 'approved', status: 'resumed' } });
      const result = await gi(['invocations', 'event', '--bot', 'acme', 'inv1', '--name', 'approved', '--body', '{}', '--token', 'given-token'], { GI_URL: cli.service.url, DATA_DIR: '/nonexistent' });
      expect(result.code).toBe(0);
      expect(cli.service.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`POST ${EVENT}`]);
      expect(cli.service.requests[0].headers.authorization).toBe('Bearer given-token');
    });

    it("passes the service's refusal on: a job that finished (409), an unknown one (404)", async () => {
      serve(problem(409, 'Invocation already finished', 'The invocation has already finished (Completed); the event was not kept.', { type: 'urn:gi:problem:already-finished', invocationId: 'inv1' }));
      expect(await gi(['invocations', 'event', '--bot', 'acme', 'inv1', '--name', 'approved', '--body', '{}'])).toMatchObject({
        code: 1,
        err: 'error: Invocation already finished: The invocation has already finished (Completed); the event was not kept. (invocation inv1)\n',
      });
      const asJson = await gi(['--json', 'invocations', 'event', '--bot', 'acme', 'inv1', '--name', 'approved', '--body', '{}']);
      expect(JSON.parse(asJson.out)).toMatchObject({ type: 'urn:gi:problem:already-finished', status: 409, exitCode: 1 });
      cli.service.reset();
      serve(problem(404, 'Not found', "No invocation 'inv2' exists for this bot (unknown or expired)."));
      expect(await gi(['invocations', 'event', '--bot', 'acme', 'inv2', '--name', 'approved', '--body', '{}'])).toMatchObject({
        code: 1,
        err: "error: Not found: No invocation 'inv2' exists for this bot (unknown or expired).\n",
      });
    });

    it.each([
      [['--body', '{}'], 'missing --name'],
      [['--name', 'approved'], "give the event's payload: --body JSON or --body-file F"],
      [['--name', '', '--body', '{}'], '--name must be the event name the job waits for'],
      [['--name', 'a\u0007b', '--body', '{}'], '--name must be the event name the job waits for'],
      [['--name', 'x'.repeat(201), '--body', '{}'], '--name must be the event name the job waits for'],
      [['--name', 'approved', '--body', '{oops'], '--body is not valid JSON'],
      [['--name', 'approved', '--body', '{}', '--body-file', 'x.json'], 'pass either --body or --body-file, not both'],
      [['--name', 'approved', '--body', '{}', '--platform', '../x'], '--platform "../x" must be letters'],
      [['--name', 'approved', '--body', '{}', '--token', ' '], '--token must not be empty'],
    ])('refuses %j before sending anything: %s', async (options, message) => {
      const result = await gi(['invocations', 'event', '--bot', 'acme', 'inv1', ...options]);
      expect(result).toMatchObject({ code: 2, err: expect.stringContaining(message) });
      expect(result.err).toContain("(see 'gi invocations event --help')");
      expect(cli.service.requests).toHaveLength(0);
    });

    it('refuses an invocation id longer than any id', async () => {
      expect(await gi(['invocations', 'event', '--bot', 'acme', 'x'.repeat(129), '--name', 'a', '--body', '{}'])).toMatchObject({ code: 2, err: expect.stringContaining('longer than 128 characters') });
      expect(cli.service.requests).toHaveLength(0);
    });

    it('never shows the bot token it minted, nor the admin token', async () => {
      serve({ status: 202, json: { invocationId: 'inv1', name: 'approved', status: 'resumed' } });
      const result = await gi(['invocations', 'event', '--bot', 'acme', 'inv1', '--name', 'approved', '--body', '{}']);
      expect(result.out + result.err).not.toMatch(new RegExp(`minted-bot-token|${FAKE_ADMIN_TOKEN}`));
    });
  });
});

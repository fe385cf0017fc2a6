import fc from 'fast-check';
import type { CliEnv } from '@gi/config';
import { captureIo, FakeService } from './fake-service.fixture';
import { runCli } from './run-cli';
import { createProgressIndicator } from './progress-indicator';
import { terminalSink, terminalText } from './terminal-text';

const ADMIN = 'admin-secret-0123456789abcdef';
const noUp = async () => {
  throw new Error('not in tests');
};
/** Any C0 control but tab and newline, DEL, any C1 control. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** What a hostile caller or connector writes: clear the screen, an OSC 8 hyperlink, an OSC 52 clipboard write, a C1 CSI, a carriage return. */
const HOSTILE = '\x1b[2J\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07\x1b]52;c;cm0gLXJmIH4=\x07\x9b31m\rok';

describe('terminalText', () => {
  it('shows every C0 and C1 control as \\xNN and keeps tab and newline', () => {
    expect(terminalText('a\x1b[31mb\tc\nd\x9be\x7f\r')).toBe('a\\x1b[31mb\tc\nd\\x9be\\x7f\\x0d');
    expect(terminalText('one\ntwo', { singleLine: true })).toBe('one\\x0atwo');
  });

  it('leaves no control character but layout, whatever the text (fast-check)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(fc.integer({ min: 0, max: 0xa0 }).map((c) => String.fromCharCode(c)), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 })), maxLength: 100 }), (text) => {
        const shown = terminalText(text);
        expect(shown).not.toMatch(CONTROL);
        expect(terminalText(text, { singleLine: true })).not.toMatch(/[\n\x00-\x08\x0b-\x1f\x7f-\x9f]/);
        // Text without controls is shown as it is.
        if (!CONTROL.test(text)) expect(shown).toBe(text);
      }),
    );
  });
});

describe('text output of caller- and connector-controlled text', () => {
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

  const invocation = {
    id: 'inv1', integrationId: 'ack', entityName: 'Order', mode: 'async', status: 'Failed', attempt: 1,
    createdAt: '2026-01-01T00:00:00.000Z', startedAt: '2026-01-01T00:00:01.000Z', finishedAt: '2026-01-01T00:00:02.000Z', durationMs: 1000,
    error: { code: 'connector_error', title: `title ${HOSTILE}`, detail: `detail ${HOSTILE}` },
    progress: { percent: 50, message: `progress ${HOSTILE}` },
    callback: { url: 'https://hooks.example.com/gi', state: 'failed', attempts: 1, nextAttemptAt: null, lastError: `why ${HOSTILE}`, deliveredAt: null },
    outcome: { status: 'Failed', responseBody: { text: HOSTILE } },
    logs: [{ at: '2026-01-01T00:00:01.500Z', level: 'info', message: `line ${HOSTILE}\nforged 2026-01-01 00:00:09Z INFO  all good` }],
  };

  it('invocations show prints the error, progress, callback, reply and logs as inert text', async () => {
    service.on('GET', '/admin/bots/acme/invocations/inv1', { status: 200, json: invocation });
    const result = await gi(['invocations', 'show', '--bot', 'acme', 'inv1']);
    expect(result.code).toBe(0);
    expect(result.out).not.toMatch(CONTROL);
    expect(result.out).toContain('progress     50% progress \\x1b[2J\\x1b]8;;https://evil.example/\\x07click');
    // A log line is one line: a newline in the message cannot forge the next one.
    expect(result.out).toContain('INFO  line \\x1b[2J');
    expect(result.out).toContain('\\x9b31m\\x0dok\\x0aforged 2026-01-01 00:00:09Z INFO  all good\n');
  });

  it('invocations list prints the error column as inert text', async () => {
    service.on('GET', '/admin/bots/acme/invocations', { status: 200, json: { invocations: [invocation] } });
    const result = await gi(['invocations', 'list', '--bot', 'acme']);
    expect(result.code).toBe(0);
    expect(result.out).not.toMatch(CONTROL);
    expect(result.out).toContain('title \\x1b[2J');
  });

  it('connector show prints the code and the source files as inert text, keeping their tabs and newlines', async () => {
    service.on('GET', '/admin/bots/acme/integrations/ack', {
      status: 200,
      json: {
        botId: 'acme', integrationId: 'ack', version: 1, entityName: 'Order', pool: 'default', timeoutSeconds: 60, allowedHosts: [`api.example.com${HOSTILE}`],
        deployedAt: '2026-01-02T00:00:00.000Z', code: `// ${HOSTILE}\nif (x) {\n\treturn 1;\n}`,
        sources: [{ path: `src/${HOSTILE}.ts`, content: `// ${HOSTILE}\n` }],
        versions: [{ version: 1, deployedAt: '2026-01-02T00:00:00.000Z' }],
      },
    });
    const sources = await gi(['connector', 'show', '--bot', 'acme', '--integration', 'ack']);
    const bundle = await gi(['connector', 'show', '--bot', 'acme', '--integration', 'ack', '--bundle']);
    for (const result of [sources, bundle]) {
      expect(result.code).toBe(0);
      expect(result.out).not.toMatch(CONTROL);
    }
    expect(bundle.out).toContain('--- bundle ---\n// \\x1b[2J');
    expect(bundle.out).toContain('\nif (x) {\n\treturn 1;\n}\n');
  });

  it('the spinner of gi invoke shows a connector\'s progress text as inert text', async () => {
    const io = captureIo({ tty: true });
    const indicator = createProgressIndicator(terminalSink(io.err), 'inv1', () => 0);
    indicator.update({ status: 'Running', message: HOSTILE });
    indicator.stop();
    // The line clearing is the CLI's own drawing and stays; what the connector wrote does not.
    expect(io.stderr()).toContain('\r\x1b[2K');
    expect(io.stderr().replaceAll('\r\x1b[2K', '')).not.toMatch(CONTROL);
    expect(io.stderr()).toContain('Running \\x1b[2J');
  });

  it('an error from the service is one inert line on stderr', async () => {
    service.on('GET', '/admin/bots/acme/invocations/inv1', { status: 422, json: { type: 'about:blank', title: `Nope ${HOSTILE}`, status: 422, detail: HOSTILE } });
    const result = await gi(['invocations', 'show', '--bot', 'acme', 'inv1']);
    expect(result.code).not.toBe(0);
    expect(result.err).toContain('Nope \\x1b[2J');
    expect(result.err).not.toMatch(CONTROL);
  });

  it('--json prints the same text as JSON wrote it', async () => {
    service.on('GET', '/admin/bots/acme/invocations/inv1', { status: 200, json: invocation });
    const result = await gi(['--json', 'invocations', 'show', '--bot', 'acme', 'inv1']);
    expect(JSON.parse(result.out)).toEqual(invocation);
    expect(result.out).toContain('"title": "title \\u001b[2J');
    expect(result.out).not.toContain('\\x1b');
  });
});

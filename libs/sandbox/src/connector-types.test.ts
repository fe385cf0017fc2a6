import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const EXAMPLES = join(__dirname, '../../../examples/connectors');

/** A connector that uses every standard global, as an author would, checked against the declarations. */
const STANDARD_GLOBALS = `/// <reference path="./context.d.ts" />
const entity = Context.GetRequestEntity();
const params = new URLSearchParams(entity ? entity.RequestParams : '');
const bytes = new TextEncoder().encode('Basic ' + btoa('user:' + params.get('key')));
const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: false });
const copy = structuredClone({ when: new Date(), tags: new Set(['a']) }, { transfer: [] });
const controller = new AbortController();
controller.signal.addEventListener('abort', (event) => console.log(event.type, controller.signal.reason), { once: true });
const any = AbortSignal.any([controller.signal, AbortSignal.timeout(1000)]);
any.onabort = () => undefined;
const target = new EventTarget();
target.dispatchEvent(new CustomEvent('ready', { detail: copy.tags.has('a') }));
const timer = setTimeout(() => controller.abort(new DOMException('stop', 'AbortError')), 10);
clearTimeout(timer);
queueMicrotask(() => reportError(new Error('never')));
await new Promise((resolve) => setTimeout(resolve, performance.now() > 0 ? 1 : 2));
const form = new FormData();
form.append('file', new File(['a,b'], 'a.csv', { type: 'text/csv' }));
const sent = await fetch(new Request('https://api.example.com/upload', { method: 'POST', body: form, signal: AbortSignal.timeout(5000) }));
const reply = await fetch('https://api.example.com/items', { headers: new Headers({ Accept: 'application/json' }), redirect: 'manual' });
const items = reply.ok ? await reply.clone().json() : await reply.text();
const blob = await Response.json({ items }, { status: 201 }).blob();
Context.SetResponseEntity({ ResponseBody: { text: text + atob('eA=='), url: new URL('/a', 'https://b.example').href, ua: navigator.userAgent, same: self === globalThis, sent: sent.status, cookies: reply.headers.getSetCookie(), size: blob.size } });
// @ts-expect-error: a connector has no DOM
document.title;
`;

/** A connector that uses the durable calls, as an author would, and misuses them where the declarations must say so. */
const DURABLE_CALLS = `/// <reference path="./context.d.ts" />
const sent: { id: string } = await Context.Step('send', async ({ idempotencyKey, attempt }) => {
  const reply = await fetch('https://api.example.com/messages', { method: 'POST', headers: { 'Idempotency-Key': idempotencyKey, 'X-Attempt': String(attempt) } });
  if (reply.status === 400) throw new Context.NonRetryableError(await reply.text());
  return { id: (await reply.json()).id as string };
}, { retries: { limit: 3, delay: '10 seconds', backoff: 'exponential' }, timeout: 30_000 });
await Context.Step('log', () => undefined);
await Context.Sleep('between batches', '1 hour');
await Context.SleepUntil('tomorrow', new Date(Date.now() + 86_400_000));
await Context.SleepUntil('new year', '2027-01-01T00:00:00Z');
const report = await Context.WaitForEvent<{ delivered: number }>('delivery report', { timeout: '2 days' });
const delivered: number = report === null ? 0 : report.delivered;
const error: Error = new Context.NonRetryableError('no');
Context.SetResponseEntity({ ResponseBody: { sent, delivered, error: error.message } });
// @ts-expect-error: a step needs its function
await Context.Step('no function');
// @ts-expect-error: backoff is one of three
await Context.Step('bad', () => 1, { retries: { limit: 1, backoff: 'random' } });
// @ts-expect-error: retries need a limit
await Context.Step('bad', () => 1, { retries: { delay: 5 } });
`;

describe('the editor declarations of a connector (examples/connectors/context.d.ts)', () => {
  it('type-check every example connector and the standard globals, with no browser or Node API', () => {
    const virtual = join(EXAMPLES, 'standard-globals.check.js');
    const durable = join(EXAMPLES, 'durable-calls.check.ts');
    const examples = readdirSync(EXAMPLES).filter((name) => name.endsWith('.js') || (name.endsWith('.ts') && !name.endsWith('.d.ts')));
    const files = [...examples.map((name) => join(EXAMPLES, name)), virtual, durable];
    const options: ts.CompilerOptions = { allowJs: true, checkJs: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleDetection: ts.ModuleDetectionKind.Force, types: [] };
    const host = ts.createCompilerHost(options);
    const { getSourceFile, fileExists } = host;
    // Each example, as an author would write it: the declarations referenced at its top.
    host.getSourceFile = (name, version, ...rest) => {
      if (name === virtual) return ts.createSourceFile(name, STANDARD_GLOBALS, version);
      if (name === durable) return ts.createSourceFile(name, DURABLE_CALLS, version);
      if (name.startsWith(EXAMPLES) && (name.endsWith('.js') || (name.endsWith('.ts') && !name.endsWith('.d.ts')))) {
        return ts.createSourceFile(name, `/// <reference path="./context.d.ts" />\n${ts.sys.readFile(name)}`, version);
      }
      return getSourceFile(name, version, ...rest);
    };
    host.fileExists = (name) => name === virtual || name === durable || fileExists(name);
    const program = ts.createProgram(files, options, host);
    const problems = ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName.replace(EXAMPLES, '')}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(problems).toEqual([]);
  }, 60_000);
});

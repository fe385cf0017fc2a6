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

describe('the editor declarations of a connector (examples/connectors/context.d.ts)', () => {
  it('type-check every example connector and the standard globals, with no browser or Node API', () => {
    const virtual = join(EXAMPLES, 'standard-globals.check.js');
    const files = [...readdirSync(EXAMPLES).filter((name) => name.endsWith('.js')).map((name) => join(EXAMPLES, name)), virtual];
    const options: ts.CompilerOptions = { allowJs: true, checkJs: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleDetection: ts.ModuleDetectionKind.Force, types: [] };
    const host = ts.createCompilerHost(options);
    const { getSourceFile, fileExists } = host;
    // Each example, as an author would write it: the declarations referenced at its top.
    host.getSourceFile = (name, version, ...rest) => {
      if (name === virtual) return ts.createSourceFile(name, STANDARD_GLOBALS, version);
      if (name.startsWith(EXAMPLES) && name.endsWith('.js')) return ts.createSourceFile(name, `/// <reference path="./context.d.ts" />\n${ts.sys.readFile(name)}`, version);
      return getSourceFile(name, version, ...rest);
    };
    host.fileExists = (name) => name === virtual || fileExists(name);
    const program = ts.createProgram(files, options, host);
    const problems = ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName.replace(EXAMPLES, '')}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(problems).toEqual([]);
  }, 60_000);
});

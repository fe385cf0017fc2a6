// A/B of reading a webhook call's JSON body: libs/http readExactTextBody + the domain's parseRequestBody
// (UTF-8 check, depth limit) against koa-body's JSON parser, each in a Koa app driven in-process (no
// port), 1 KiB of JSON per call. `measure(koaBody)` gives the median CPU time per call of each, in µs.
// koa-body is not a dependency: install it outside the project and pass its `koaBody` (docs/decisions.md).
import Koa from 'koa';
import { parseRequestBody } from '@gi/domain';
import { callInProcess, createHttpServer, readExactTextBody, withoutByteOrderMark } from '@gi/http';

const BODY = JSON.stringify({ orderId: 42, customer: { id: 7, name: 'Ada', tags: Array.from({ length: 20 }, (_, i) => `tag-${i}`) }, lines: Array.from({ length: 12 }, (_, i) => ({ sku: `A-${i}`, qty: i, price: 9.99 })) });
const CALLS = Number(process.env.AB_CALLS ?? 4000);

function server(reader: Koa.Middleware) {
  const app = new Koa();
  app.use(reader);
  app.use((ctx) => {
    ctx.body = 'ok';
  });
  return createHttpServer(app, { headersMs: 10_000, requestMs: 60_000 });
}

export async function measure(koaBody: (options: object) => Koa.Middleware): Promise<Record<string, number>> {
  const ours = server(async (ctx, next) => {
    const text = await readExactTextBody(ctx, { maxBytes: 1024 * 1024, idleMs: 10_000, totalMs: 60_000 });
    ctx.state.body = parseRequestBody(ctx.get('content-type'), withoutByteOrderMark(text), 64);
    await next();
  });
  const theirs = server(koaBody({ json: true, text: true, urlencoded: true, multipart: false, jsonLimit: '1mb', includeUnparsed: true }));
  const run = async (target: ReturnType<typeof server>) => {
    for (let i = 0; i < 500; i++) await callInProcess(target, { method: 'POST', path: '/', headers: { 'content-type': 'application/json' }, body: BODY });
    const start = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) await callInProcess(target, { method: 'POST', path: '/', headers: { 'content-type': 'application/json' }, body: BODY });
    const used = process.cpuUsage(start);
    return (used.user + used.system) / CALLS;
  };
  const result: Record<string, number[]> = { ours: [], koaBody: [] };
  for (let round = 0; round < 5; round++) {
    result.ours.push(await run(ours));
    result.koaBody.push(await run(theirs));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { ours: median(result.ours), koaBody: median(result.koaBody) };
}

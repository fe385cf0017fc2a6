// The ceiling of the benchmark: bare Koa routes doing the same work as the connectors, in a process of
// its own like the service: no store, no sandbox, no auth. What the service adds is measured against
// them. `/forward` forwards the order with fetch to DOWNSTREAM_URL and answers its JSON, as the
// forwarding connector does; every other path does the ack connector's transform. Run as
// `node tools/bench/ceiling.mjs`; logs `{"msg":"listening","port":N}` like the services.
import Koa from 'koa';
import { createServer } from 'node:http';
import getRawBody from 'raw-body';

const DOWNSTREAM_URL = process.env.DOWNSTREAM_URL;

const app = new Koa();
app.use(async (ctx) => {
  const body = JSON.parse(await getRawBody(ctx.req, { limit: '1mb', encoding: 'utf8' }));
  ctx.type = 'application/json';
  if (ctx.path === '/forward' && DOWNSTREAM_URL) {
    const answer = await fetch(`${DOWNSTREAM_URL}/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    ctx.body = JSON.stringify(await answer.json());
    return;
  }
  ctx.body = JSON.stringify({ Status: 'Accepted', Message: `order ${body.orderId}` });
});
const server = createServer(app.callback());
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'listening', port: server.address().port })));
process.on('SIGTERM', () => server.close(() => process.exit(0)));

// The ceiling of the benchmark: a bare Koa route doing the same transform as the ack connector, in a
// process of its own like the service: no store, no sandbox, no auth. What the service adds is measured
// against it. Run as `node tools/bench/ceiling.mjs`; logs `{"msg":"listening","port":N}` like the services.
import Koa from 'koa';
import { createServer } from 'node:http';
import getRawBody from 'raw-body';

const app = new Koa();
app.use(async (ctx) => {
  const body = JSON.parse(await getRawBody(ctx.req, { limit: '1mb', encoding: 'utf8' }));
  ctx.type = 'application/json';
  ctx.body = JSON.stringify({ Status: 'Accepted', Message: `order ${body.orderId}` });
});
const server = createServer(app.callback());
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'listening', port: server.address().port })));
process.on('SIGTERM', () => server.close(() => process.exit(0)));

// The ceiling of the benchmark: a bare Koa route doing the same transform as the ack connector,
// in-process: no store, no sandbox, no auth. What the service adds is measured against it.
import Koa from 'koa';
import { createServer } from 'node:http';
import getRawBody from 'raw-body';

export async function startCeiling() {
  const app = new Koa();
  app.use(async (ctx) => {
    const body = JSON.parse(await getRawBody(ctx.req, { limit: '1mb', encoding: 'utf8' }));
    ctx.type = 'application/json';
    ctx.body = JSON.stringify({ Status: 'Accepted', Message: `order ${body.orderId}` });
  });
  const server = createServer(app.callback());
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

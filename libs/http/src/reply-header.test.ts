import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { Context } from 'koa';
import { setReplyHeader } from './reply-header';

function reply(): Context {
  const res = new ServerResponse(new IncomingMessage(new Socket()));
  return { res } as unknown as Context;
}

describe('setReplyHeader', () => {
  it('sets a header of the reply, replacing an earlier value', () => {
    const ctx = reply();
    setReplyHeader(ctx, 'Cache-Control', 'no-cache');
    setReplyHeader(ctx, 'Cache-Control', 'no-store');
    expect(ctx.res.getHeader('cache-control')).toBe('no-store');
  });

  it('does nothing once the reply has started, as ctx.set (Node would throw)', () => {
    const ctx = reply();
    ctx.res.writeHead(200);
    expect(() => setReplyHeader(ctx, 'X-Invocation-Id', 'inv-1')).not.toThrow();
    expect(ctx.res.getHeader('x-invocation-id')).toBeUndefined();
  });
});

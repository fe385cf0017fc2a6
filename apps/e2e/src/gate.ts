import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';

/** A connector that asks a local gate (below) and replies `{ done: true }` once the gate lets it through. */
export const gated = (port: number) => `
await Context.Http.Request({ method: 'GET', url: 'http://127.0.0.1:${port}/gate', timeoutMs: 60000 });
Context.SetResponseEntity({ ResponseBody: { done: true } });
`;

export interface Gate {
  server: Server;
  port: number;
  /** How many requests reached the gate: the connector runs that got there. */
  arrived(): number;
  /** Lets every held request through, and every later one at once. */
  open(): void;
}

/**
 * An HTTP server on loopback that holds every request until `open()`: a test orders its steps around a
 * run that is certainly still going, instead of sleeping and hoping it is. The connectors need
 * CONNECTOR_TRUSTED_ADDRESSES=127.0.0.1 and allowedHosts ['127.0.0.1'].
 */
export async function openGate(): Promise<Gate> {
  const held: ServerResponse[] = [];
  let arrived = 0;
  let opened = false;
  const server = createServer((_req, res) => {
    arrived += 1;
    if (opened) res.end('{}');
    else held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as { port: number }).port,
    arrived: () => arrived,
    open: () => {
      opened = true;
      for (const res of held.splice(0)) res.end('{}');
    },
  };
}

/** Polls until `predicate` holds; fails after `timeoutMs`. */
export async function until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !predicate(); await new Promise((resolve) => setTimeout(resolve, 20))) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
  }
}

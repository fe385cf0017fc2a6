import { request } from 'node:http';

export interface FreshReply {
  status: number;
  json: Record<string, unknown>;
  ms: number;
}

/**
 * One request on a connection of its own (no keep-alive): the primary of `gi up --processes N` hands
 * connections to its processes in turn, so N requests sent at once this way reach every process.
 */
export function freshRequest(
  url: string,
  { method = 'GET', headers = {}, body, timeoutMs }: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<FreshReply> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, connection: 'close' }, agent: false, ...(timeoutMs ? { signal: AbortSignal.timeout(timeoutMs) } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: Record<string, unknown> = {};
        try {
          json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        } catch {
          json = { text };
        }
        resolve({ status: res.statusCode ?? 0, json, ms: Date.now() - started });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The log lines (JSON) a service printed with the given message. */
export function logLines(output: string[], msg: string): Array<Record<string, unknown>> {
  return output.flatMap((line) => {
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      return entry.msg === msg ? [entry] : [];
    } catch {
      return [];
    }
  });
}

/** Resolves once `count` lines with `msg` were printed (fails after `timeoutMs`). */
export async function waitForLogs(output: string[], msg: string, count: number, timeoutMs = 20_000): Promise<Array<Record<string, unknown>>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lines = logLines(output, msg);
    if (lines.length >= count) return lines;
    if (Date.now() > deadline) throw new Error(`expected ${count} "${msg}" lines, saw ${lines.length}:\n${output.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// Latency of one caller at a time, timed to the microsecond: autocannon's histogram keeps whole
// milliseconds, too coarse for a call that takes well under one.
import http from 'node:http';

/**
 * POSTs `body` to `url` `calls` times in sequence over one keep-alive connection (after `warmUp` calls
 * not counted); resolves with the count, the elapsed seconds and the p50, p90 and p99 in milliseconds.
 * Any answer but 200 fails the run.
 */
export async function sequentialLatency(url, { headers, body, calls, warmUp = 500 }) {
  const target = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const options = { host: target.hostname, port: target.port, path: target.pathname + target.search, method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } };
  const call = () =>
    new Promise((resolve, reject) => {
      const request = http.request(options, (response) => {
        response.resume();
        response.once('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`${url} answered ${response.statusCode}`))));
      });
      request.once('error', reject);
      request.end(body);
    });
  try {
    for (let i = 0; i < warmUp; i++) await call();
    const latencies = new Float64Array(calls);
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) {
      const before = process.hrtime.bigint();
      await call();
      latencies[i] = Number(process.hrtime.bigint() - before) / 1e6;
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    latencies.sort();
    const at = (share) => latencies[Math.min(calls - 1, Math.floor(share * calls))];
    return { calls, seconds, p50: at(0.5), p90: at(0.9), p99: at(0.99) };
  } finally {
    agent.destroy();
  }
}

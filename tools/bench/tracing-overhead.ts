// Cost of tracing per HTTP call: a trivial route of a createHttpApp app, driven in-process (no port),
// in a process with tracing off (no OTEL_* variables: the default), on, or on with callers that sampled
// out (traceparent flags 00). Prints the median wall time per call of 5 rounds, in µs.
//   npx esbuild tools/bench/tracing-overhead.ts --bundle --platform=node --packages=external --outfile=dist/bench/tracing-overhead.js
//   node dist/bench/tracing-overhead.js off | on | unsampled
// "on" exports over OTLP/HTTP to a port nobody listens on (127.0.0.1:9): spans are made, batched and sent.
import { callInProcess, createHttpApp, createHttpServer, publicAccess, Routes } from '@gi/http';
import { createLogger, createMetrics, startTracing } from '@gi/observability';

const CALLS = Number(process.env.CALLS ?? 5000);
const ROUNDS = 5;
const mode = process.argv[2] ?? 'off';

async function main() {
  const logger = createLogger('silent', 'bench');
  const env = mode === 'off' ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
  const tracing = await startTracing(env, 'bench', logger);
  const routes = new Routes().get('/bots/:botId/ping', publicAccess, (ctx) => {
    ctx.body = { ok: true };
  });
  const server = createHttpServer(createHttpApp({ logger, metrics: createMetrics(), ready: async () => true, routes: [routes] }), { headersMs: 10_000, requestMs: 60_000 });
  const headers = mode === 'unsampled' ? { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00' } : {};
  const call = () => callInProcess(server, { path: '/bots/b1/ping', headers });
  for (let i = 0; i < 2000; i++) await call();
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) await call();
    rounds.push(Number(process.hrtime.bigint() - started) / 1000 / CALLS);
  }
  rounds.sort((a, b) => a - b);
  const traceparent = (await call()).headers.traceparent ?? '(none)';
  console.log(`${mode}: tracing ${tracing.enabled ? 'on' : 'off'}, ${rounds[2].toFixed(1)} µs per call (median of ${ROUNDS} x ${CALLS}; min ${rounds[0].toFixed(1)}, max ${rounds[4].toFixed(1)}); reply traceparent ${traceparent}`);
  await tracing.shutdown();
}

void main();

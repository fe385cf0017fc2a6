import { randomBytes } from 'node:crypto';
import { SecretCipher, SecretVault } from '@gi/auth';
import { SmallServices } from '@gi/testing';
import type { ControlDeps } from './control.deps';
import { controlRouter } from './control.router';

const ADMIN_TOKEN = 'control-test-admin-token-0123456789';

/**
 * The admin API in process over in-memory ports; code containing "syntax error" does not compile, and
 * a run (a replay) answers the code it ran, the request body and the secrets' names.
 */
export function controlApp({ maxBodyBytes = 64 * 1024, secretsKey = randomBytes(32) as Buffer | null, publicBaseUrl = 'https://hooks.example.com/' as string | null } = {}) {
  const world = new SmallServices();
  const deps: ControlDeps = {
    store: world.store,
    tokens: world.tokens,
    secrets: new SecretVault(world.store.secrets, secretsKey && new SecretCipher(secretsKey), world.store.catalog),
    runtime: {
      compile: (code) => (code.includes('syntax error') ? { ok: false, message: 'unexpected token', line: 1, column: 8 } : { ok: true }),
      run: async ({ code, entity, secrets, blockedHttp }) => ({
        kind: 'ok',
        responseBody: { ran: code, body: entity?.RequestBody ?? null, secrets: Object.keys(secrets ?? {}), blocked: blockedHttp !== undefined },
        logs: [],
        durationMs: 1,
      }),
    },
    log: world.logger,
    bus: world.bus,
    clock: world.clock,
    settings: {
      adminToken: ADMIN_TOKEN,
      platformSegment: 'Platform',
      publicBaseUrl: publicBaseUrl ?? undefined,
      maxBodyBytes,
      bodyTimeouts: { idleMs: 10_000, totalMs: 60_000 },
      maxJsonDepth: 64,
      quotaDefaults: { ratePerSecond: 0, burst: null, maxInFlight: 0 },
    },
  };
  const call = world.serve([controlRouter(deps)]);
  const admin = async (method: string, path: string, body?: unknown) => {
    const reply = await call({
      method,
      path: `/admin${path}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { ...reply, json: reply.body ? JSON.parse(reply.body) : null };
  };
  return { world, call, admin };
}

import jwt from 'jsonwebtoken';
import type { KeyedInboundAuth } from '@gi/domain';
import type { Caller, InProcessReply, RouteEntry } from '@gi/http';
import { inboundProducers } from '@gi/testing';
import type { Producer } from '@gi/testing';
import { ADMIN_TOKEN, SERVICES, ServicesFixture } from './services.fixture';
import type { ComposedService } from './services.fixture';

/**
 * The route-auth matrix: every route every service registers (read from its route tables, with the
 * access each declares), called in-process with every credential that is not its own and with every
 * other spelling of its path. A wrong credential never gets a 2xx; nothing ever gets a 5xx; a path
 * spelled another way matches no route.
 */

type Credential = 'none' | 'garbage' | 'basic' | 'forged' | 'admin' | 'bot' | 'otherBot';
const CREDENTIALS: readonly Credential[] = ['none', 'garbage', 'basic', 'forged', 'admin', 'bot', 'otherBot'];
/** The credentials a route accepts. */
const RIGHT: Record<Caller, readonly Credential[]> = { public: CREDENTIALS, admin: ['admin'], bot: ['bot'] };

interface Call {
  route: RouteEntry;
  method: string;
  path: string;
  credential: Credential;
}

const PUBLIC_URL = 'https://hooks.example.com';
// Nothing runs connectors here: a sync call that got through by mistake answers 504 in a second, not 300 s.
// A secrets key, so the routes that set secrets take a right call (without one they answer 409).
const fixture = new ServicesFixture({ SYNC_TIMEOUT_SECONDS: '1', SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'), PUBLIC_BASE_URL: PUBLIC_URL });
const headerOf: Partial<Record<Credential, string>> = {};
const values: Record<string, string> = { botId: 'acme', entityName: 'Order', integrationId: 'ack', asset: 'js/main.js', name: 'API_KEY' };

beforeAll(async () => {
  await fixture.start();
  const acme = await fixture.setUpBot('acme');
  const other = await fixture.setUpBot('other');
  // A token of acme for the routes that revoke or change one: the bot's own token keeps working.
  values.tokenId = (await fixture.admin('POST', '/bots/acme/tokens', { label: 'victim' })).json.tokenId as string;
  const started = await fixture.service('embedded').call({
    method: 'POST',
    path: '/api/Platform/acme/Order/ack/GenericIntegration?asyncResponse=true',
    headers: { authorization: `Bearer ${acme.token}`, 'content-type': 'application/json' },
    body: '{"orderId":1}',
  });
  values.invocationId = (JSON.parse(started.body) as { invocationId: string }).invocationId;
  // A well-formed token of acme, signed with another key.
  const forged = jwt.sign({ sub: 'acme', jti: acme.tokenId, iss: 'generic-integration', aud: 'generic-integration' }, 'another-secret-0123456789abcdef0123456789');
  Object.assign(headerOf, {
    garbage: 'Bearer not-a-token',
    basic: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`,
    forged: `Bearer ${forged}`,
    admin: `Bearer ${ADMIN_TOKEN}`,
    bot: `Bearer ${acme.token}`,
    otherBot: `Bearer ${other.token}`,
  });
});
afterAll(() => fixture.close());
// The secrets the delete routes remove, and the draft publishing takes, set again before each test: every service shares the one store.
beforeEach(async () => {
  for (const scope of ['/bots/acme', '/bots/acme/integrations/ack']) await fixture.admin('PUT', `${scope}/secrets/${values.name}`, { value: 'route-auth-secret' });
  await fixture.admin('PUT', '/bots/acme/integrations/ack/draft', { entityName: 'Order', code: 'Context.SetResponseEntity({ ResponseBody: 2 });' });
});

const concrete = (path: string) => path.replace(/[:*](\w+)/g, (_m, name: string) => values[name]);
const staticSegments = (path: string) => path.split('/').filter((segment) => segment !== '' && !/^[:*]/.test(segment));

/** What a route's call needs besides its path: a query that starts or polls without waiting, or names the event it sends; a JSON body. */
function queryOf(path: string): string {
  if (/GenericIntegration(FileTransfer)?$/.test(path)) return '?asyncResponse=true';
  if (path.endsWith('/GetGenericIntegrationResponse')) return `?invocationId=${values.invocationId}&waitSeconds=0`;
  if (path.endsWith('/GenericIntegrationEvent')) return `?invocationId=${values.invocationId}&name=approved`;
  return '';
}

/** The methods a route answers: a GET route also HEAD; the 405 answer of a path any other method. */
const methodsOf = (route: RouteEntry) => (route.method === '*' ? ['PATCH', 'OPTIONS'] : route.method === 'GET' ? ['GET', 'HEAD'] : [route.method]);

/**
 * Every other spelling of a route's path: per static segment, its case changed, a letter %-encoded, a
 * doubled slash, a dot segment before it, a detour through `..`; and a trailing slash. (Path parameters
 * are values, not spellings: they are decoded, and the access check and the handler see the same value.)
 */
function variantsOf(path: string): string[] {
  const variants = new Set<string>([`${path}/`]);
  for (const segment of staticSegments(path)) {
    const at = path.indexOf(`/${segment}`);
    const swap = (spelled: string) => `${path.slice(0, at)}${spelled}${path.slice(at + segment.length + 1)}`;
    const flipped = segment[0] === segment[0].toUpperCase() ? segment[0].toLowerCase() : segment[0].toUpperCase();
    variants.add(swap(`/${flipped}${segment.slice(1)}`));
    variants.add(swap(`/${segment.toUpperCase()}`));
    variants.add(swap(`/%${segment.charCodeAt(0).toString(16).toUpperCase()}${segment.slice(1)}`));
    variants.add(swap(`//${segment}`));
    variants.add(swap(`/./${segment}`));
    variants.add(swap(`/x/../${segment}`));
  }
  variants.delete(path);
  return [...variants].map(concrete);
}

async function send(service: ComposedService, call: Call): Promise<InProcessReply> {
  const { method, path, credential } = call;
  const authorization = headerOf[credential];
  const body = ['POST', 'PUT', 'PATCH'].includes(method) ? '{}' : undefined;
  return service.call({ method, path: path + queryOf(call.route.path), headers: { ...(authorization ? { authorization } : {}), ...(body ? { 'content-type': 'application/json' } : {}) }, body });
}

/** Runs the calls (one after the other: some change what the next one sees) and returns a line per failed expectation. */
async function check(service: ComposedService, calls: Call[], expectation: (reply: InProcessReply, call: Call) => string | null): Promise<string[]> {
  const failures: string[] = [];
  for (const call of calls) {
    const reply = await send(service, call);
    const problem = reply.status >= 500 ? `a ${reply.status}` : expectation(reply, call);
    if (problem) failures.push(`${call.method} ${call.path} [${call.route.caller} route, ${call.credential}]: ${problem} (${reply.status} ${reply.body.slice(0, 120)})`);
  }
  return failures;
}

const protectedCalls = (routes: RouteEntry[], pick: (route: RouteEntry) => readonly Credential[]): Call[] =>
  routes
    .filter((route) => route.caller !== 'public')
    .flatMap((route) => methodsOf(route).flatMap((method) => pick(route).map((credential) => ({ route, method, path: concrete(route.path), credential }))));

/** The credentials of another kind than the route's: a webhook token on admin routes, the admin token on a bot's. */
const otherKind = (route: RouteEntry): Credential[] => (route.caller === 'admin' ? ['bot', 'otherBot'] : ['admin']);

describe.each(SERVICES)('route-auth matrix of the %s service', (name) => {
  const service = () => fixture.service(name);

  it('lists routes with their access; every admin and bot route answers no-store, whoever calls', () => {
    const { routes } = service();
    const callers = new Set(routes.map((route) => route.caller));
    expect(callers.has('public')).toBe(true);
    if (name === 'embedded' || name === 'control') expect(callers.has('admin')).toBe(true);
    if (name === 'embedded' || name === 'gateway' || name === 'results') expect(callers.has('bot')).toBe(true);
    for (const route of routes) expect(['public', 'admin', 'bot']).toContain(route.caller);
  });

  it('refuses every protected route without credentials or with malformed, garbage or forged ones (401, no-store)', async () => {
    const calls = protectedCalls(service().routes, () => ['none', 'garbage', 'basic', 'forged']);
    const failures = await check(service(), calls, (reply) => {
      if (reply.status !== 401) return 'not 401';
      if (reply.headers['cache-control'] !== 'no-store') return 'no Cache-Control: no-store';
      return reply.headers['www-authenticate']?.startsWith('Bearer realm=') ? null : 'no WWW-Authenticate challenge';
    });
    expect(failures).toEqual([]);
  });

  it("refuses a webhook token on admin routes and the admin token on a bot's routes (401)", async () => {
    const calls = protectedCalls(service().routes, otherKind);
    expect(await check(service(), calls, (reply) => (reply.status === 401 && reply.headers['cache-control'] === 'no-store' ? null : 'not a no-store 401'))).toEqual([]);
  });

  it("refuses a token of another bot on a bot's routes (403)", async () => {
    const calls = protectedCalls(service().routes, (route) => (route.caller === 'bot' ? ['otherBot'] : []));
    expect(await check(service(), calls, (reply) => (reply.status === 403 && reply.headers['cache-control'] === 'no-store' ? null : 'not a no-store 403'))).toEqual([]);
  });

  it('takes the right credential on every route (the matrix is not vacuous), never with a 5xx', async () => {
    const calls = service().routes.flatMap((route) =>
      methodsOf(route).map((method) => ({ route, method, path: concrete(route.path), credential: RIGHT[route.caller].includes('bot') ? 'bot' : RIGHT[route.caller][0] }) as Call),
    );
    const failures = await check(service(), calls, (reply, call) => {
      if (reply.status === 401 || reply.status === 403 || reply.status === 404) return 'refused although the credential is right';
      if (call.route.caller !== 'public' && reply.headers['cache-control'] !== 'no-store') return 'no Cache-Control: no-store';
      return null;
    });
    expect(failures).toEqual([]);
  });

  it('covers the routes of durable jobs: the event route as a bot route, the steps route as an admin route, each taking its own credential', async () => {
    const event = { method: 'POST', path: '/api/Platform/:botId/GenericIntegrationEvent' };
    const steps = { method: 'GET', path: '/admin/bots/:botId/invocations/:invocationId/steps' };
    const expected = [...(['embedded', 'gateway'].includes(name) ? [{ ...event, caller: 'bot' }] : []), ...(['embedded', 'control'].includes(name) ? [{ ...steps, caller: 'admin' }] : [])];
    const found = service().routes.filter((route) => route.method !== '*' && [event.path, steps.path].includes(route.path));
    expect(found).toEqual(expected);
    // An invocation of its own: the matrix's may be cancelled by now (its DELETE route with the right credential).
    const started = await fixture.service('embedded').call({
      method: 'POST',
      path: '/api/Platform/acme/Order/ack/GenericIntegration?asyncResponse=true',
      headers: { authorization: headerOf.bot as string, 'content-type': 'application/json' },
      body: '{}',
    });
    const { invocationId } = JSON.parse(started.body) as { invocationId: string };
    const statuses = [];
    for (const route of found) {
      const path = route.caller === 'bot' ? `/api/Platform/acme/GenericIntegrationEvent?invocationId=${invocationId}&name=approved` : `/admin/bots/acme/invocations/${invocationId}/steps`;
      const reply = await service().call({ method: route.method, path, headers: { authorization: headerOf[route.caller === 'bot' ? 'bot' : 'admin'] as string, 'content-type': 'application/json' }, body: route.method === 'POST' ? '{}' : undefined });
      statuses.push(reply.status);
    }
    // The event is kept for the queued invocation; the steps of one that made none are an empty page.
    expect(statuses).toEqual(expected.map((route) => (route.caller === 'bot' ? 202 : 200)));
  });

  it('matches no other spelling of a path, whatever the credential: case, %-encoding, double and trailing slashes, dot segments', async () => {
    const registered = new Set(service().routes.map((route) => concrete(route.path)));
    const calls = service().routes.flatMap((route) =>
      variantsOf(route.path).flatMap((path) =>
        methodsOf(route)
          .slice(0, 1)
          .flatMap((method) => (['none', 'admin', 'bot', 'otherBot'] as const).map((credential) => ({ route, method, path, credential }))),
      ),
    );
    expect(calls.length).toBeGreaterThan(service().routes.length * 4);
    const failures = await check(service(), calls, (reply, call) => {
      if (registered.has(call.path)) return reply.status < 300 && !RIGHT[call.route.caller].includes(call.credential) ? 'a 2xx with a wrong credential' : null;
      return reply.status === 404 && reply.headers['cache-control'] === 'no-store' ? null : 'not a no-store 404';
    });
    expect(failures).toEqual([]);
  });
});

/**
 * The webhook routes again, for an integration of each inbound scheme (docs/inbound.md): no credential of
 * another kind gets in (not even a valid token of the bot, unless the integration allows both), the
 * scheme's own credential does, and the same signed with another key does not. Never a 5xx.
 */
describe.each(['embedded', 'gateway'] as const)('route-auth matrix of the %s service, per inbound scheme', (name) => {
  let producers: Record<KeyedInboundAuth['scheme'], Producer>;
  const service = () => fixture.service(name);
  const path = (integration: string, endpoint = 'GenericIntegration') => `/api/Platform/acme/Order/${integration}/${endpoint}?asyncResponse=true`;
  const post = (integration: string, headers: Record<string, string>, body = '{}', contentType = 'application/json', endpoint?: string) =>
    service().call({ method: 'POST', path: path(integration, endpoint), headers: { 'content-type': contentType, ...headers }, body });

  beforeAll(async () => {
    producers = await inboundProducers('INBOUND_KEY');
    for (const [scheme, producer] of Object.entries(producers)) {
      for (const [id, auth] of [
        [`in-${scheme}`, producer.auth],
        [`in-${scheme}-or-token`, { ...producer.auth, allowBearer: true }],
      ] as const) {
        expect((await fixture.admin('PUT', `/bots/acme/integrations/${id}`, { entityName: 'Order', code: 'Context.SetResponseEntity({ ResponseBody: 1 });', inboundAuth: auth })).status).toBe(200);
        expect([200, 201]).toContain((await fixture.admin('PUT', `/bots/acme/integrations/${id}/secrets/INBOUND_KEY`, { value: producer.key })).status);
      }
    }
  });

  it('refuses every credential of another kind with a 401 naming the scheme, a valid token of the bot included', async () => {
    const failures: string[] = [];
    for (const scheme of Object.keys(producers)) {
      for (const credential of CREDENTIALS) {
        const authorization = headerOf[credential];
        const reply = await post(`in-${scheme}`, authorization ? { authorization } : {});
        const type = JSON.parse(reply.body || '{}').type as string;
        const challenge = reply.headers['www-authenticate'] ?? '';
        const expected = scheme === 'basic' && credential === 'basic' ? 'unknown-key' : 'missing-signature';
        if (reply.status !== 401 || type !== `urn:gi:problem:${expected}` || !challenge.includes('realm="generic-integration"') || reply.headers['cache-control'] !== 'no-store') {
          failures.push(`${scheme} with ${credential}: ${reply.status} ${type} ${challenge}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it("takes the scheme's own credential, and refuses it made with another key", async () => {
    const failures: string[] = [];
    for (const [scheme, producer] of Object.entries(producers)) {
      for (const key of [producer.key, producer.otherKey]) {
        const url = `${PUBLIC_URL}${path(`in-${scheme}`)}`;
        const call = await producer.sign({ url, at: Date.now(), delivery: `${name}-${scheme}-${key.length}`, key });
        const reply = await post(`in-${scheme}`, call.headers, call.body, call.contentType);
        const expected = key === producer.key ? 202 : 401;
        if (reply.status !== expected) failures.push(`${scheme} with ${key === producer.key ? 'its key' : 'another key'}: ${reply.status} ${reply.body.slice(0, 160)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('takes a token of the bot on an integration that allows both, and refuses another bot\'s (403) and the admin token (401)', async () => {
    const failures: string[] = [];
    for (const scheme of Object.keys(producers)) {
      for (const [credential, expected] of [
        ['bot', 202],
        ['otherBot', 403],
        ['admin', 401],
        ['none', 401],
      ] as const) {
        const authorization = headerOf[credential];
        const reply = await post(`in-${scheme}-or-token`, authorization ? { authorization } : {});
        if (reply.status !== expected) failures.push(`${scheme} (or a token) with ${credential}: ${reply.status} ${reply.body.slice(0, 120)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('refuses a signed scheme on the file transfer endpoint (401), and lets basic and api-key through to its own checks', async () => {
    const failures: string[] = [];
    for (const [scheme, producer] of Object.entries(producers)) {
      const call = await producer.sign({ url: `${PUBLIC_URL}${path(`in-${scheme}`, 'GenericIntegrationFileTransfer')}`, at: Date.now(), delivery: `${name}-file-${scheme}` });
      const reply = await post(`in-${scheme}`, call.headers, call.body, call.contentType, 'GenericIntegrationFileTransfer');
      // Past the credential, a body that is not multipart gets 415.
      const expected = scheme === 'basic' || scheme === 'api-key' ? 415 : 401;
      if (reply.status !== expected) failures.push(`${scheme} on the file transfer endpoint: ${reply.status}`);
    }
    expect(failures).toEqual([]);
  });
});

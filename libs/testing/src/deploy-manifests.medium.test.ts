import { spawn, spawnSync } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { busNames, laneQueueName, LANES } from '@gi/bus-amqp';
import { mongoUrlOf, parseServiceConfig } from '@gi/config';
import { operationsRouter, readinessOf } from '@gi/http';
import { createMetrics } from '@gi/observability';
import { itWhere } from './suite-skip';
import type { SkippableSuite } from './suite-skip';

/**
 * The deployment files checked against the code, without Docker or a cluster: docker-compose.yml, the
 * Caddyfile, the Dockerfile and every Kubernetes manifest under deploy/k8s.
 */
const ROOT = join(__dirname, '../../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

type Json = Record<string, unknown>;
type Obj = Json & { kind?: string; metadata?: { name?: string }; spec?: Json };
const obj = (value: unknown) => value as Obj;
const asList = (value: unknown) => (value ?? []) as unknown[];

const IMAGE = 'generic-integration:local';
const SECRET_KEYS = /TOKEN|SECRET|PASSWORD|PASS$/;
let SERVICE_NAMES: readonly string[];

/** A route as the services' route tables list it. */
interface Route {
  method: string;
  path: string;
  caller: string;
}
/** The routes each public service serves, as its command composes them. */
const ROUTES: Record<'gateway' | 'results' | 'control', Route[]> = { gateway: [], results: [], control: [] };
type Fixture = { start(): Promise<Fixture>; service(name: string): { routes: Route[] }; close(): Promise<void> };
let fixture: Fixture;

beforeAll(async () => {
  // The CLI's own list of service commands and its composition of the services (read by path, not as a dependency).
  ({ SERVICE_NAMES } = (await import(join(ROOT, 'apps/cli/src/service-names'))) as { SERVICE_NAMES: readonly string[] });
  const { ServicesFixture } = (await import(join(ROOT, 'apps/services/src/services.fixture'))) as { ServicesFixture: new () => Fixture };
  fixture = await new ServicesFixture().start();
  for (const name of ['gateway', 'results', 'control'] as const) ROUTES[name] = fixture.service(name).routes;
});
afterAll(() => fixture?.close());

type Upstream = 'gateway' | 'results' | 'control' | null;
/** A proxy's choice of service for a request. */
type Proxy = (method: string, path: string) => Upstream | Promise<Upstream>;

const OPERATIONS = new Set(['/healthz', '/readyz', '/metrics']);
const SAMPLE: Record<string, string> = { botId: 'acme', entityName: 'Order', integrationId: 'ack', tokenId: 't-1', invocationId: 'i-1', asset: 'js/main.js' };
const concrete = (path: string) => path.replace(/[:*](\w+)/g, (_m, name: string) => SAMPLE[name]);
const methodsOf = (route: Route) => (route.method === '*' ? ['PATCH', 'PUT'] : route.method === 'GET' ? ['GET', 'HEAD'] : [route.method]);
const matches = (route: Route, method: string, path: string) =>
  (route.method === '*' || route.method === method || (route.method === 'GET' && method === 'HEAD')) &&
  new RegExp(`^${route.path.replace(/:\w+/g, '[^/]+').replace(/\*\w+/g, '.+')}$`).test(path);

/** How proxies match paths: escapes decoded, slashes merged, dot segments resolved (the request goes on as sent). */
function normalized(path: string): string {
  const segments: string[] = [];
  for (const raw of path.split('/').slice(1)) {
    let segment = raw;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      // kept as sent
    }
    if (segment === '..') segments.pop();
    else if (segment !== '.' && segment !== '') segments.push(segment);
  }
  return `/${segments.join('/')}${path.endsWith('/') && segments.length > 0 ? '/' : ''}`;
}

/** The case variants of the first segment of a route's path, the one proxies route on (`/Admin`, `/ADMIN`, `/Api`, ...). */
function caseVariants(path: string): string[] {
  const [, first, ...rest] = path.split('/');
  const flipped = first[0] === first[0].toUpperCase() ? first[0].toLowerCase() : first[0].toUpperCase();
  return [...new Set([flipped + first.slice(1), first.toUpperCase(), first.toLowerCase()])].filter((spelled) => spelled !== first).map((spelled) => concrete(['', spelled, ...rest].join('/')));
}

/**
 * The routing table a proxy must implement, checked against the services' own route tables: every route
 * of a service reaches a service that serves it (polls the results service), and no case variant of the
 * segment the proxy routes on (/admin, /console, /api) reaches any service.
 */
async function expectRoutesLikeTheServices(proxy: Proxy): Promise<void> {
  const misrouted: string[] = [];
  for (const [owner, routes] of Object.entries(ROUTES)) {
    for (const route of routes.filter((r) => !OPERATIONS.has(r.path))) {
      for (const method of methodsOf(route)) {
        const path = concrete(route.path);
        const upstream = await proxy(method, path);
        const served = upstream !== null && ROUTES[upstream].some((candidate) => matches(candidate, method, path));
        const poll = path.endsWith('/GetGenericIntegrationResponse') && ['GET', 'HEAD', 'DELETE'].includes(method);
        if (!served || (poll && upstream !== 'results')) misrouted.push(`${method} ${path} (${owner}) -> ${upstream}`);
      }
      for (const variant of caseVariants(route.path)) {
        const upstream = await proxy(methodsOf(route)[0], variant);
        if (upstream !== null) misrouted.push(`${methodsOf(route)[0]} ${variant} -> ${upstream}`);
      }
    }
  }
  expect(misrouted).toEqual([]);
  expect(Object.values(ROUTES).every((routes) => routes.length > 3)).toBe(true);
}

/** Every key of `env` must survive parsing: the config parser drops names it does not know. */
function expectKnownToConfig(env: Record<string, string>, where: string): void {
  const parsed = parseServiceConfig(env) as Json;
  const unknown = Object.keys(env).filter((key) => !(key in parsed));
  expect({ where, unknown }).toEqual({ where, unknown: [] });
}

/** The `executor --pools a,b` pools of a command line. */
function poolsOf(args: string[]): string[] {
  const at = args.indexOf('--pools');
  return at >= 0 ? args[at + 1].split(',') : ['default'];
}

describe('docker-compose.yml', () => {
  const exampleEnv = Object.fromEntries(
    read('.env.example')
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]),
  );
  // The example leaves secrets empty; fill them as `openssl rand -hex 32` would (the secrets key as
  // `openssl rand -base64 32`, which its comment asks for).
  const generated = (key: string) => (key === 'SECRETS_KEY' ? Buffer.alloc(32, 7).toString('base64') : 'ab'.repeat(32));
  const env: Record<string, string> = Object.fromEntries(Object.entries(exampleEnv).map(([k, v]) => [k, v || generated(k)]));
  const interpolate = (text: string) =>
    text.replace(/\$\{([A-Z_]+)(?::?[-?]([^}]*))?\}/g, (_m, name: string, fallback?: string) => env[name] ?? fallback ?? '');

  const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Json> };
  const services = compose.services;
  const giServices = Object.entries(services).filter(([, service]) => service.image === IMAGE);
  const environmentOf = (service: Json) =>
    Object.fromEntries(Object.entries((service.environment ?? {}) as Record<string, string | number>).map(([k, v]) => [k, interpolate(String(v))]));

  it('runs gateway, results, control and two executor pools from one image built here', () => {
    expect(giServices.map(([name]) => name).sort()).toEqual(['control', 'executor-bulk', 'executor-default', 'gateway', 'results']);
    for (const [name, service] of giServices) {
      expect({ name, build: service.build }).toEqual({ name, build: '.' });
      const command = service.command as string[];
      expect(SERVICE_NAMES).toContain(command[0]);
      expect(command[0]).not.toBe('up');
    }
    expect(obj(services['executor-default']).deploy).toMatchObject({ replicas: 2 });
    expect(poolsOf(services['executor-default'].command as string[])).toEqual(['default']);
    expect(poolsOf(services['executor-bulk'].command as string[])).toEqual(['bulk']);
  });

  it('sets only variables the config parser knows, with values it accepts', () => {
    for (const [name, service] of giServices) {
      const serviceEnv = environmentOf(service);
      expectKnownToConfig(serviceEnv, name);
      expect(serviceEnv.STORE_URL).toMatch(/^mongodb:\/\/mongo:27017\/.*replicaSet=rs0/);
      expect(serviceEnv.AMQP_URL).toMatch(/^amqp:\/\/[^:]+:[^@]+@rabbitmq:5672\/$/);
    }
    expect(environmentOf(services.control).ADMIN_TOKEN).toBeDefined();
  });

  it('lets every executor hand back its runs at its drain deadline well before its stop grace period ends', () => {
    for (const [name, service] of giServices.filter(([, service]) => (service.command as string[])[0] === 'executor')) {
      const drainSeconds = parseServiceConfig(environmentOf(service)).DRAIN_DEADLINE_SECONDS;
      const graceSeconds = Number(/^(\d+)s$/.exec(String(service.stop_grace_period))?.[1]);
      expect({ name, room: graceSeconds - drainSeconds }).toEqual({ name, room: expect.any(Number) });
      expect(graceSeconds - drainSeconds).toBeGreaterThanOrEqual(10);
    }
  });

  it('holds no literal secret: every one comes from .env, whose example leaves them empty', () => {
    const raw = read('docker-compose.yml');
    for (const [name, service] of Object.entries(services)) {
      for (const [key, value] of Object.entries((service.environment ?? {}) as Record<string, string>)) {
        if (SECRET_KEYS.test(key)) expect({ name, key, value }).toEqual({ name, key, value: expect.stringMatching(/^\$\{[A-Z_]+(:[-?][^}]*)?\}$/) });
      }
    }
    expect(raw).toMatch(/amqp:\/\/\$\{RABBITMQ_USER[^}]*\}:\$\{RABBITMQ_PASSWORD:\?[^}]*\}@/);
    for (const key of ['ADMIN_TOKEN', 'TOKEN_SECRET', 'SECRETS_KEY', 'RABBITMQ_PASSWORD']) expect({ key, value: exampleEnv[key] }).toEqual({ key, value: '' });
    expect(read('.dockerignore')).toMatch(/^\.env$/m);
  });

  it('shares no volume between the services: the MongoDB store keeps invocations and uploaded files (GridFS)', () => {
    for (const [name, service] of giServices) {
      expect({ name, volumes: service.volumes }).toEqual({ name, volumes: undefined });
      expect({ name, mongo: mongoUrlOf(parseServiceConfig(environmentOf(service))) !== null }).toEqual({ name, mongo: true });
    }
    // DATA_DIR (only `up` writes to it) exists in the image and belongs to the user the services run as.
    const dataDir = /^ENV [\s\S]*?DATA_DIR=(\S+)/m.exec(read('Dockerfile'))?.[1];
    expect(dataDir).toBe('/data');
    expect(read('Dockerfile')).toMatch(/mkdir -p \/data && chown node:node \/data/);
  });

  it('starts MongoDB as a one-node replica set it initiates, and RabbitMQ with its UI and a non-guest user', () => {
    expect(services.mongo.command).toEqual(expect.arrayContaining(['--replSet', 'rs0']));
    expect(JSON.stringify(obj(services.mongo.healthcheck).test)).toContain("rs.initiate({ _id: 'rs0', members: [{ _id: 0, host: 'mongo:27017' }] })");
    expect(services.rabbitmq.image).toMatch(/-management$/);
    const rabbitEnv = environmentOf(services.rabbitmq);
    expect(rabbitEnv.RABBITMQ_DEFAULT_USER).not.toBe('guest');
    for (const [, service] of giServices) expect(Object.keys(service.depends_on as Json).sort()).toEqual(['mongo', 'rabbitmq']);
  });

  it('puts one base URL in front on port 8080, with the Caddyfile', () => {
    const proxy = services.proxy;
    const [mount] = (proxy.volumes as string[])[0].split(':');
    expect(mount).toBe('./deploy/caddy/Caddyfile');
    expect(interpolate((proxy.ports as string[])[0])).toBe('8080:8080');
  });
});

describe('deploy/caddy/Caddyfile', () => {
  const caddy = read('deploy/caddy/Caddyfile');

  /**
   * The Caddyfile's routing: its named matchers (methods, and a path_regexp matched case-sensitively
   * on the normalised path, as Caddy does) in the order of their handle blocks, then the 404.
   */
  function caddyProxy(): Proxy {
    const port = parseServiceConfig({}).PORT;
    const matchers = new Map<string, { methods: string[] | null; path: RegExp }>();
    for (const [, name, body] of caddy.matchAll(/^\s*@(\w+)\s+(\{[^}]*\}|[^\n]+)/gm)) {
      const methods = /method\s+([A-Z ]+)/.exec(body)?.[1].trim().split(/\s+/) ?? null;
      const regexp = /path_regexp\s+(\S+)/.exec(body)?.[1];
      if (!regexp) throw new Error(`matcher @${name} has no path_regexp`);
      matchers.set(name, { methods, path: new RegExp(regexp) });
    }
    const handles = [...caddy.matchAll(/handle @(\w+) \{\s*reverse_proxy (\w+):(\d+)/g)].map(([, name, upstream, upstreamPort]) => {
      expect(Number(upstreamPort)).toBe(port);
      return { matcher: matchers.get(name)!, upstream: upstream as Upstream };
    });
    expect(caddy).toMatch(/handle \{\s*respond "Not found" 404/);
    return (method, path) =>
      handles.find(({ matcher }) => (matcher.methods === null || matcher.methods.includes(method)) && matcher.path.test(normalized(path)))?.upstream ?? null;
  }

  it('matches paths only with case-sensitive path_regexp matchers (the path matcher ignores case)', () => {
    const directives = caddy.split('\n').map((line) => line.replace(/#.*/, '').trim());
    expect(directives.filter((line) => /^(@\w+\s+)?path\s/.test(line) || /^handle\s+\//.test(line))).toEqual([]);
    for (const [, regexp] of caddy.matchAll(/path_regexp\s+(\S+)/g)) expect(regexp).not.toMatch(/\(\?i\)/);
  });

  it('routes like the services: polls to results, /admin and /console to control, the rest of /api to the gateway; no case variant of /admin reaches control', async () => {
    const proxy = caddyProxy();
    await expectRoutesLikeTheServices(proxy);
    expect([proxy('GET', '/Admin/bots'), proxy('GET', '/ADMIN/bots'), proxy('GET', '/Console'), proxy('GET', '/API/Platform/acme/GetGenericIntegrationResponse')]).toEqual([null, null, null, null]);
    expect([proxy('PUT', '/api/Platform/acme/GetGenericIntegrationResponse'), proxy('GET', '/metrics')]).toEqual(['gateway', null]);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

  it('builds on a Node LTS slim image and ships production dependencies only', () => {
    for (const from of dockerfile.match(/^FROM \S+/gm) ?? []) expect(from).toMatch(/^FROM node:(22|24)-[a-z]+-slim$/);
    expect(dockerfile).toMatch(/npm ci\b/);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
    expect(finalStage).toMatch(/COPY --from=build \/src\/node_modules/);
  });

  it('runs as a non-root user, checks /healthz, and starts any service by its command', () => {
    const user = /^USER (\S+)/m.exec(finalStage)?.[1];
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    expect(finalStage).toMatch(/^HEALTHCHECK .*\/healthz/ms);
    expect(finalStage).toMatch(/^ENTRYPOINT \["node", "dist\/apps\/cli\/main\.js"\]$/m);
    expect(finalStage).toMatch(/^CMD \["up"\]$/m);
  });
});

describe('deploy/k8s', () => {
  const BASE = 'deploy/k8s/base';
  const OVERLAY = 'deploy/k8s/overlays/example';

  /** The objects of a kustomization: its resources, following directories recursively. */
  function load(dir: string): Obj[] {
    const kustomization = parse(read(join(dir, 'kustomization.yaml'))) as { resources: string[]; patches?: Array<{ path: string }> };
    for (const patch of kustomization.patches ?? []) expect(existsSync(join(ROOT, dir, patch.path))).toBe(true);
    return kustomization.resources.flatMap((resource) => {
      const path = join(dir, resource);
      if (existsSync(join(ROOT, path, 'kustomization.yaml'))) return load(path);
      return parseAllDocuments(read(path)).map((doc) => obj(doc.toJS()));
    });
  }

  const objects = load(OVERLAY);
  const byKind = (kind: string) => objects.filter((o) => o.kind === kind);
  const named = (kind: string, name: string) => byKind(kind).find((o) => o.metadata?.name === name);
  const deployments = byKind('Deployment');
  const containerOf = (deployment: Obj) => asList(obj(obj(obj(deployment.spec).template).spec).containers)[0] as Json;
  const podLabels = (deployment: Obj) => obj(obj(obj(deployment.spec).template).metadata).labels as Record<string, string>;
  const config = obj(named('ConfigMap', 'gi-config')).data as Record<string, string>;
  const secrets = byKind('Secret').map((s) => s.stringData as Record<string, string>);

  it('runs every service of the CLI from the same image as docker-compose.yml', () => {
    expect(deployments.map((d) => d.metadata?.name).sort()).toEqual(['gi-control', 'gi-executor-bulk', 'gi-executor-default', 'gi-gateway', 'gi-results']);
    for (const deployment of deployments) {
      const container = containerOf(deployment);
      expect(container.image).toBe(IMAGE);
      expect(SERVICE_NAMES).toContain((container.args as string[])[0]);
    }
    const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Json> };
    expect(compose.services.gateway.image).toBe(IMAGE);
    const images = (parse(read(join(OVERLAY, 'kustomization.yaml'))) as { images: Array<{ name: string }> }).images;
    expect(images.map((i) => i.name)).toEqual([IMAGE.split(':')[0]]);
  });

  it('probes /readyz and /healthz, which every service serves, on the port the services listen on', () => {
    const routes = operationsRouter(createMetrics(), readinessOf({})).list().map((route) => route.path);
    expect(routes).toEqual(expect.arrayContaining(['/healthz', '/readyz']));
    const port = parseServiceConfig(config).PORT;
    for (const deployment of deployments) {
      const container = containerOf(deployment);
      expect(container.ports).toEqual([{ name: 'http', containerPort: port }]);
      expect(container.readinessProbe).toMatchObject({ httpGet: { path: '/readyz', port: 'http' } });
      expect(container.livenessProbe).toMatchObject({ httpGet: { path: '/healthz', port: 'http' } });
      expect(obj(container.resources).requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
      expect(obj(obj(obj(deployment.spec).template).spec).securityContext).toMatchObject({ runAsNonRoot: true });
    }
  });

  it('configures only variables the config parser knows, from objects that exist', () => {
    const secretKeys = Object.fromEntries(secrets.flatMap((data) => Object.keys(data)).map((key) => [key, 'x']));
    const valid = {
      ...config,
      ...secretKeys,
      STORE_URL: 'mongodb://m/gi',
      AMQP_URL: 'amqp://r/',
      ADMIN_TOKEN: 'a'.repeat(32),
      TOKEN_SECRET: 's'.repeat(32),
      SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
    };
    expectKnownToConfig(valid, 'ConfigMap and Secrets');
    for (const deployment of deployments) {
      for (const source of asList(containerOf(deployment).envFrom) as Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>) {
        if (source.configMapRef) expect(named('ConfigMap', source.configMapRef.name)).toBeDefined();
        if (source.secretRef) expect(named('Secret', source.secretRef.name)).toBeDefined();
      }
    }
    expect(asList(containerOf(obj(named('Deployment', 'gi-control'))).envFrom)).toContainEqual({ secretRef: { name: 'gi-admin' } });
  });

  it('lets every executor hand back its runs at its drain deadline well before its termination grace period ends', () => {
    const executors = deployments.filter((deployment) => (containerOf(deployment).args as string[])[0] === 'executor');
    expect(executors.length).toBeGreaterThan(0);
    for (const deployment of executors) {
      const env = Object.fromEntries((asList(containerOf(deployment).env) as Array<{ name: string; value: string }>).map(({ name, value }) => [name, value]));
      expectKnownToConfig(env, `${deployment.metadata?.name} env`);
      const drainSeconds = parseServiceConfig({ ...config, ...env }).DRAIN_DEADLINE_SECONDS;
      const graceSeconds = obj(obj(obj(deployment.spec).template).spec).terminationGracePeriodSeconds as number;
      expect({ deployment: deployment.metadata?.name, room: graceSeconds - drainSeconds }).toEqual({ deployment: deployment.metadata?.name, room: expect.any(Number) });
      expect(graceSeconds - drainSeconds).toBeGreaterThanOrEqual(10);
    }
  });

  it('ships placeholders only, which the services refuse to start with', () => {
    for (const data of secrets) for (const value of Object.values(data)) expect(value).toContain('REPLACE-ME');
    const placeholder = (key: string) => secrets.find((data) => key in data)?.[key] ?? '';
    expect(() => parseServiceConfig({ ADMIN_TOKEN: placeholder('ADMIN_TOKEN') })).toThrow(/ADMIN_TOKEN/);
    expect(() => parseServiceConfig({ TOKEN_SECRET: placeholder('TOKEN_SECRET') })).toThrow(/TOKEN_SECRET/);
    expect(() => parseServiceConfig({ SECRETS_KEY: placeholder('SECRETS_KEY') })).toThrow(/SECRETS_KEY/);
    expect(placeholder('STORE_URL')).toMatch(/^mongodb:\/\/.*replicaSet=/);
    // KEDA needs the vhost in the AMQP URL.
    expect(placeholder('AMQP_URL')).toMatch(/^amqp:\/\/[^/]+\/$/);
  });

  it('scales every executor pool, those of docker-compose.yml included, on the length of its own queues (both lanes)', () => {
    const names = busNames(parseServiceConfig(config).BUS_PREFIX);
    const pools = deployments
      .filter((d) => (containerOf(d).args as string[])[0] === 'executor')
      .map((d) => ({ deployment: d.metadata?.name, pools: poolsOf(containerOf(d).args as string[]) }));
    const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Json> };
    const composePools = Object.values(compose.services)
      .filter((s) => (s.command as string[] | undefined)?.[0] === 'executor')
      .flatMap((s) => poolsOf(s.command as string[]));
    expect(pools.flatMap((p) => p.pools).sort()).toEqual(expect.arrayContaining(composePools.sort()));
    for (const { deployment, pools: [pool] } of pools) {
      const scaled = byKind('ScaledObject').find((s) => obj(obj(s.spec).scaleTargetRef).name === deployment);
      expect(scaled).toBeDefined();
      const triggers = asList(obj(scaled?.spec).triggers) as Array<{ type: string; metadata: Json; authenticationRef: { name: string } }>;
      expect(triggers.map((trigger) => trigger.metadata.queueName)).toEqual(LANES.map((lane) => laneQueueName(names, pool, lane)));
      for (const trigger of triggers) {
        expect(trigger).toMatchObject({ type: 'rabbitmq', metadata: { mode: 'QueueLength' } });
        expect(named('TriggerAuthentication', trigger.authenticationRef.name)).toBeDefined();
      }
    }
  });

  it('shares no volume between pods: only scratch space, since MongoDB keeps the uploaded files (GridFS)', () => {
    expect(byKind('PersistentVolumeClaim')).toEqual([]);
    for (const deployment of deployments) {
      const pod = obj(obj(obj(deployment.spec).template).spec);
      const volumes = asList(pod.volumes) as Array<Record<string, unknown>>;
      expect({ deployment: deployment.metadata?.name, volumes: volumes.map((v) => Object.keys(v).sort()) }).toEqual({
        deployment: deployment.metadata?.name,
        volumes: volumes.map(() => ['emptyDir', 'name']),
      });
    }
    expect(mongoUrlOf({ STORE_URL: secrets.find((data) => 'STORE_URL' in data)?.STORE_URL })).not.toBeNull();
  });

  it('covers every Deployment with a disruption budget, and the gateway with an autoscaler', () => {
    for (const deployment of deployments) {
      const labels = podLabels(deployment);
      const budget = byKind('PodDisruptionBudget').find((p) => {
        const selector = obj(obj(p.spec).selector).matchLabels as Record<string, string>;
        return Object.entries(selector).every(([k, v]) => labels[k] === v);
      });
      expect({ deployment: deployment.metadata?.name, budget: budget !== undefined }).toEqual({ deployment: deployment.metadata?.name, budget: true });
    }
    const [hpa] = byKind('HorizontalPodAutoscaler');
    expect(obj(hpa.spec).scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'gi-gateway' });
  });

  /**
   * ingress-nginx's routing of the Ingress: with use-regex every path is a `location ~*` (case ignored
   * up to an inline `(?-i)`), tried longest first, on the normalised path; anything else is its 404.
   */
  function ingressProxy(): Proxy {
    const [ingress] = byKind('Ingress');
    expect(obj(obj(ingress.metadata).annotations ?? {})).toMatchObject({ 'nginx.ingress.kubernetes.io/use-regex': 'true' });
    const [rule] = asList(obj(ingress.spec).rules) as Array<{ http: { paths: Array<{ path: string; pathType: string; backend: { service: { name: string } } }> } }>;
    const locations = [...rule.http.paths]
      .sort((a, b) => b.path.length - a.path.length)
      .map(({ path, pathType, backend }) => {
        expect({ path, pathType }).toEqual({ path, pathType: 'ImplementationSpecific' });
        // JavaScript has no inline flags: what precedes `(?-i)` must hold no letter, so case cannot matter there.
        const [caseless, sensitive] = path.includes('(?-i)') ? path.split('(?-i)') : [path, null];
        expect({ path, caseSensitive: sensitive !== null && !/[a-z]/i.test(caseless) }).toEqual({ path, caseSensitive: true });
        return { regexp: new RegExp(`^${caseless}${sensitive}`), upstream: backend.service.name.replace(/^gi-/, '') as Upstream };
      });
    return (_method, path) => locations.find(({ regexp }) => regexp.test(normalized(path)))?.upstream ?? null;
  }

  it('routes like the services, case-sensitively: polls to results, /admin and /console to control, /api to the gateway', async () => {
    const proxy = ingressProxy();
    await expectRoutesLikeTheServices(proxy);
    expect([proxy('GET', '/Admin/bots'), proxy('GET', '/admin'), proxy('GET', '/Console/'), proxy('GET', '/Api/Platform/acme/Order/ack/GenericIntegration')]).toEqual([null, null, null, null]);
    const [ingress] = byKind('Ingress');
    const [rule] = asList(obj(ingress.spec).rules) as Array<{ http: { paths: Array<{ backend: { service: { name: string } } }> } }>;
    for (const path of rule.http.paths) {
      const service = named('Service', path.backend.service.name);
      expect(service).toBeDefined();
      const selector = obj(service?.spec).selector as Record<string, string>;
      expect(deployments.some((d) => Object.entries(selector).every(([k, v]) => podLabels(d)[k] === v))).toBe(true);
    }
  });

  it('keeps every manifest file parseable and every resource it lists present', () => {
    expect(objects.length).toBeGreaterThan(10);
    expect(existsSync(join(ROOT, dirname(BASE), 'base/kustomization.yaml'))).toBe(true);
    for (const o of objects) expect(typeof o.kind).toBe('string');
  });
});

/** A loopback port nothing listens on right now. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * Debian's docker-compose and caddy validate the files offline where they are installed
 * (`apt-get install --no-install-recommends docker-compose caddy`); elsewhere one SKIPPED line each
 * (REQUIRE_SUITES=compose,caddy: a failure instead).
 */
describe('validated by the tools themselves, where installed', () => {
  const has = (tool: string) => spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0 || spawnSync(tool, ['version'], { stdio: 'ignore' }).status === 0;
  const withTool = (suite: SkippableSuite, tool: string, what: string) =>
    itWhere({ suite, what, unavailable: has(tool) ? undefined : `${tool} is not installed (Debian package ${tool})` });

  const itWithCompose = withTool('compose', 'docker-compose', 'docker-compose config of docker-compose.yml');
  const itWithCaddy = withTool('caddy', 'caddy', 'caddy checks of deploy/caddy/Caddyfile');

  itWithCompose('docker-compose config accepts docker-compose.yml with the example settings filled in', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gi-compose-'));
    try {
      const env = read('.env.example').replace(/^([A-Z_]+)=$/gm, (_m, key: string) => `${key}=${'ab'.repeat(32)}`);
      writeFileSync(join(dir, '.env'), env);
      const run = spawnSync('docker-compose', ['--env-file', join(dir, '.env'), '-f', join(ROOT, 'docker-compose.yml'), 'config', '-q'], { encoding: 'utf8' });
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  itWithCaddy('caddy routes like the services, case-sensitively (run with its upstreams on loopback)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gi-caddy-'));
    const upstreams = await Promise.all(
      (['results', 'control', 'gateway'] as const).map(async (name) => {
        const server = createServer((req, res) => res.writeHead(200, { 'x-upstream': name }).end());
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        return { name, server, port: (server.address() as AddressInfo).port };
      }),
    );
    const port = await freePort();
    let caddyfile = read('deploy/caddy/Caddyfile').replace(/^:8080 \{/m, `http://127.0.0.1:${port} {`);
    for (const upstream of upstreams) caddyfile = caddyfile.replace(`${upstream.name}:8080`, `127.0.0.1:${upstream.port}`);
    writeFileSync(join(dir, 'Caddyfile'), caddyfile);
    const caddy = spawn('caddy', ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], { env: { PATH: process.env.PATH, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir }, stdio: 'ignore' });
    const proxy = (method: string, path: string) =>
      new Promise<Upstream>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, method, path }, (res) => {
          res.resume();
          resolve(res.statusCode === 404 ? null : ((res.headers['x-upstream'] as Upstream) ?? null));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      for (let waited = 0; (await proxy('GET', '/healthz').catch(() => 'down')) === 'down'; waited += 100) {
        if (waited > 10_000) throw new Error('caddy did not start');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await expectRoutesLikeTheServices(proxy);
      expect(await Promise.all(['/Admin/bots', '/%41dmin/bots', '/Console', '/API/Platform/acme/Order/ack/GenericIntegration'].map((path) => proxy('GET', path)))).toEqual([null, null, null, null]);
    } finally {
      caddy.kill();
      for (const upstream of upstreams) upstream.server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  itWithCaddy('caddy adapts the Caddyfile', () => {
    const run = spawnSync('caddy', ['adapt', '--config', join(ROOT, 'deploy/caddy/Caddyfile'), '--adapter', 'caddyfile'], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout).apps.http.servers.srv0.listen).toEqual([':8080']);
  });
});

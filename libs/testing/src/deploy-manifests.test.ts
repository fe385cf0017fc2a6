import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { busNames, poolQueueName } from '@gi/bus-amqp';
import { mongoUrlOf, parseServiceConfig } from '@gi/config';
import { createMetrics, operationsRouter } from '@gi/http';

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

beforeAll(async () => {
  // The CLI's own list of service commands (a plain data module; read by path, not as a dependency).
  ({ SERVICE_NAMES } = (await import(join(ROOT, 'apps/cli/src/services/service-names'))) as { SERVICE_NAMES: readonly string[] });
});

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
  // The example leaves secrets empty; fill them as `openssl rand -hex 32` would.
  const env: Record<string, string> = Object.fromEntries(Object.entries(exampleEnv).map(([k, v]) => [k, v || 'ab'.repeat(32)]));
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

  it('holds no literal secret: every one comes from .env, whose example leaves them empty', () => {
    const raw = read('docker-compose.yml');
    for (const [name, service] of Object.entries(services)) {
      for (const [key, value] of Object.entries((service.environment ?? {}) as Record<string, string>)) {
        if (SECRET_KEYS.test(key)) expect({ name, key, value }).toEqual({ name, key, value: expect.stringMatching(/^\$\{[A-Z_]+(:[-?][^}]*)?\}$/) });
      }
    }
    expect(raw).toMatch(/amqp:\/\/\$\{RABBITMQ_USER[^}]*\}:\$\{RABBITMQ_PASSWORD:\?[^}]*\}@/);
    for (const key of ['ADMIN_TOKEN', 'TOKEN_SECRET', 'RABBITMQ_PASSWORD']) expect({ key, value: exampleEnv[key] }).toEqual({ key, value: '' });
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

  it('puts one base URL in front: the proxy routes polls to results, /admin and /console to control, the rest of /api to the gateway', () => {
    const proxy = services.proxy;
    const [mount] = (proxy.volumes as string[])[0].split(':');
    expect(mount).toBe('./deploy/caddy/Caddyfile');
    expect(interpolate((proxy.ports as string[])[0])).toBe('8080:8080');
    const caddy = read('deploy/caddy/Caddyfile');
    const port = parseServiceConfig({}).PORT;
    const upstream = (matcher: string) => new RegExp(`handle ${matcher} \\{\\s*reverse_proxy (\\S+)`).exec(caddy)?.[1];
    expect([upstream('@poll'), upstream('/admin/\\*'), upstream('/console\\*'), upstream('/api/\\*')]).toEqual([`results:${port}`, `control:${port}`, `control:${port}`, `gateway:${port}`]);
    const poll = new RegExp(/path_regexp (\S+)/.exec(caddy)?.[1] ?? '$^');
    expect(poll.test('/api/Platform/acme/GetGenericIntegrationResponse')).toBe(true);
    expect(poll.test('/api/Platform/acme/Order/ack/GenericIntegration')).toBe(false);
    expect(caddy).toMatch(/@poll \{\s*method GET HEAD DELETE/);
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
    const routes = operationsRouter(createMetrics(), async () => true).stack.map((layer) => layer.path);
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
    const valid = { ...config, ...secretKeys, STORE_URL: 'mongodb://m/gi', AMQP_URL: 'amqp://r/', ADMIN_TOKEN: 'a'.repeat(32), TOKEN_SECRET: 's'.repeat(32) };
    expectKnownToConfig(valid, 'ConfigMap and Secrets');
    for (const deployment of deployments) {
      for (const source of asList(containerOf(deployment).envFrom) as Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>) {
        if (source.configMapRef) expect(named('ConfigMap', source.configMapRef.name)).toBeDefined();
        if (source.secretRef) expect(named('Secret', source.secretRef.name)).toBeDefined();
      }
    }
    expect(asList(containerOf(obj(named('Deployment', 'gi-control'))).envFrom)).toContainEqual({ secretRef: { name: 'gi-admin' } });
  });

  it('ships placeholders only, which the services refuse to start with', () => {
    for (const data of secrets) for (const value of Object.values(data)) expect(value).toContain('REPLACE-ME');
    const placeholder = (key: string) => secrets.find((data) => key in data)?.[key] ?? '';
    expect(() => parseServiceConfig({ ADMIN_TOKEN: placeholder('ADMIN_TOKEN') })).toThrow(/ADMIN_TOKEN/);
    expect(() => parseServiceConfig({ TOKEN_SECRET: placeholder('TOKEN_SECRET') })).toThrow(/TOKEN_SECRET/);
    expect(placeholder('STORE_URL')).toMatch(/^mongodb:\/\/.*replicaSet=/);
    // KEDA needs the vhost in the AMQP URL.
    expect(placeholder('AMQP_URL')).toMatch(/^amqp:\/\/[^/]+\/$/);
  });

  it('scales every executor pool, those of docker-compose.yml included, on the length of its own queue', () => {
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
      const [trigger] = asList(obj(scaled?.spec).triggers) as Array<{ type: string; metadata: Json; authenticationRef: { name: string } }>;
      expect(trigger).toMatchObject({ type: 'rabbitmq', metadata: { mode: 'QueueLength', queueName: poolQueueName(names, pool) } });
      expect(named('TriggerAuthentication', trigger.authenticationRef.name)).toBeDefined();
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

  it('routes the public paths like the compose proxy: polls to results, /admin and /console to control, /api to the gateway', () => {
    const [ingress] = byKind('Ingress');
    const [rule] = asList(obj(ingress.spec).rules) as Array<{ http: { paths: Array<{ path: string; backend: { service: { name: string } } }> } }>;
    const backendOf = (path: string) => rule.http.paths.find((p) => p.path === path)?.backend.service.name;
    const poll = rule.http.paths.find((p) => p.path.includes('GetGenericIntegrationResponse'));
    expect(poll?.backend.service.name).toBe('gi-results');
    expect(new RegExp(`^${poll?.path}$`).test('/api/Platform/acme/GetGenericIntegrationResponse')).toBe(true);
    expect([backendOf('/admin'), backendOf('/console'), backendOf('/api')]).toEqual(['gi-control', 'gi-control', 'gi-gateway']);
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

/**
 * Debian's docker-compose and caddy validate the files offline where they are installed
 * (`apt-get install --no-install-recommends docker-compose caddy`); elsewhere one SKIPPED line each.
 */
describe('validated by the tools themselves, where installed', () => {
  const has = (tool: string) => spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0 || spawnSync(tool, ['version'], { stdio: 'ignore' }).status === 0;
  const withTool = (tool: string, what: string) => {
    if (has(tool)) return it;
    process.stdout.write(`SKIPPED ${what}: ${tool} is not installed (Debian package ${tool})\n`);
    return it.skip;
  };

  withTool('docker-compose', 'docker-compose config of docker-compose.yml')('docker-compose config accepts docker-compose.yml with the example settings filled in', () => {
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

  withTool('caddy', 'caddy adapt of deploy/caddy/Caddyfile')('caddy adapts the Caddyfile', () => {
    const run = spawnSync('caddy', ['adapt', '--config', join(ROOT, 'deploy/caddy/Caddyfile'), '--adapter', 'caddyfile'], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout).apps.http.servers.srv0.listen).toEqual([':8080']);
  });
});

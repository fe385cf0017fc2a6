import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** How to reach a Docker engine's API over HTTP: a unix socket or a TCP host and port. */
export type DockerEndpoint = { socketPath: string } | { host: string; port: number };

/** DOCKER_HOST when set, else the sockets Docker Engine, Docker Desktop and rootless Docker create. */
export function dockerEndpoints(env: NodeJS.ProcessEnv = process.env): DockerEndpoint[] {
  const dockerHost = env.DOCKER_HOST;
  if (dockerHost) {
    if (dockerHost.startsWith('unix://')) return [{ socketPath: dockerHost.slice('unix://'.length) }];
    const tcp = /^tcp:\/\/([^:/]+):(\d+)/.exec(dockerHost);
    return tcp ? [{ host: tcp[1], port: Number(tcp[2]) }] : [];
  }
  const sockets = ['/var/run/docker.sock', join(homedir(), '.docker/run/docker.sock'), join(homedir(), '.docker/desktop/docker.sock')];
  if (env.XDG_RUNTIME_DIR) sockets.push(join(env.XDG_RUNTIME_DIR, 'docker.sock'));
  return sockets.filter((path) => existsSync(path)).map((socketPath) => ({ socketPath }));
}

// Exits 0 when GET /_ping answers 200 within the time limit; the endpoint comes as JSON in argv.
const PING_SCRIPT = `
const http = require('node:http');
const [endpoint, ms] = [JSON.parse(process.argv[1]), Number(process.argv[2])];
const req = http.get({ ...endpoint, path: '/_ping', timeout: ms }, (res) => { res.resume(); res.on('end', () => process.exit(res.statusCode === 200 ? 0 : 1)); });
req.on('timeout', () => process.exit(1));
req.on('error', () => process.exit(1));
`;

/**
 * True when a Docker engine answers its ping. Asked from a short-lived child process, so a test file
 * can decide while it registers its tests (synchronously) whether it can start containers; with no
 * socket and no DOCKER_HOST no process is started at all, and a silent engine costs at most `timeoutMs`.
 */
export function dockerEngineAnswers(timeoutMs = 1_500, env: NodeJS.ProcessEnv = process.env): boolean {
  return dockerEndpoints(env).some((endpoint) => {
    const run = spawnSync(process.execPath, ['-e', PING_SCRIPT, JSON.stringify(endpoint), String(timeoutMs)], {
      timeout: timeoutMs + 1_000,
      stdio: 'ignore',
    });
    return run.status === 0;
  });
}

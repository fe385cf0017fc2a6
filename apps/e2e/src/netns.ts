import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, connect } from 'node:net';
import type { Server, Socket } from 'node:net';

/**
 * A small network of the test's own for partition tests (Linux network namespaces, veth pairs; only
 * addresses in 10.213.0.0/16 it creates itself). Each namespace is a host with two links:
 * - a service link on a shared bridge, where the test calls services and runs its own HTTP servers;
 * - a backend link of its own to the root namespace, where a relay forwards to the broker (and a
 *   MongoDB store) on loopback. A partition takes this link down: packets are silently dropped both
 *   ways (fixed neighbour entries, so no ARP failure reports the host unreachable), established
 *   connections go quiet and new ones hang, as when a switch or a route fails. Healing brings it up.
 */

/** Why namespaces cannot be made here, or undefined when they can (root, `ip` installed, netns allowed). */
export function namespacesUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `network namespaces are Linux only (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'network namespaces need root (run the faults tier as root)';
  if (spawnSync('ip', ['-V'], { stdio: 'ignore' }).status !== 0) return "the 'ip' command is not installed (Debian package iproute2)";
  const probe = `gi-probe-${randomBytes(3).toString('hex')}`;
  const made = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (made.status !== 0) return `'ip netns add' failed: ${made.stderr.trim()}`;
  try {
    // The link kinds the lab uses, made inside the probe namespace (they go with it).
    for (const link of [['veth', 'peer', 'name', 'probe1'], ['bridge']]) {
      const added = spawnSync('ip', ['-n', probe, 'link', 'add', 'probe0', 'type', ...link], { encoding: 'utf8' });
      if (added.status !== 0) return `'ip link add type ${link[0]}' failed: ${added.stderr.trim()}`;
      spawnSync('ip', ['-n', probe, 'link', 'del', 'probe0'], { stdio: 'ignore' });
    }
    return undefined;
  } finally {
    spawnSync('ip', ['netns', 'del', probe], { stdio: 'ignore' });
  }
}

const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const macOf = (args: string[]) => (JSON.parse(ip('-j', ...args)) as Array<{ address: string }>)[0].address;

export interface LabHost {
  name: string;
  /** Prefix a command with it to run it in this namespace. */
  exec: string[];
  /** This host's address on the service bridge (services listen here). */
  serviceAddress: string;
  /** The root namespace's end of this host's backend link, where its relays listen. */
  backendGateway: string;
  /** A relay from this host's backend link to `target` (host:port on the root namespace's loopback): the port to dial at backendGateway. */
  relay(target: { host: string; port: number }): Promise<number>;
  /** Drops every packet on the backend link, both ways. */
  cut(): void;
  heal(): void;
}

export class PartitionLab {
  private readonly hosts: string[] = [];
  private readonly relays: Server[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly id = randomBytes(2).toString('hex');
  private readonly bridge = `gp${this.id}br`;
  /** The root namespace's address on the service bridge: the test's own servers listen here. */
  readonly serviceHost: string;
  private readonly net: number;

  /** Creates the bridge; call `dispose` in afterAll, also after a failure. */
  constructor() {
    const used = ip('-4', '-o', 'addr');
    let net = 0;
    for (let tries = 0; tries < 50 && (net === 0 || used.includes(`10.213.${net}.`) || used.includes(`10.213.${net + 1}.`)); tries++) net = 2 * (5 + Math.floor(Math.random() * 120));
    this.net = net;
    this.serviceHost = `10.213.${net}.1`;
    ip('link', 'add', this.bridge, 'type', 'bridge');
    ip('addr', 'add', `${this.serviceHost}/24`, 'dev', this.bridge);
    ip('link', 'set', this.bridge, 'up');
  }

  /** A new namespace, its service link on the bridge and its backend link to the root namespace. */
  addHost(): LabHost {
    const index = this.hosts.length;
    const name = `gi-part-${this.id}-${index}`;
    ip('netns', 'add', name);
    this.hosts.push(name);
    const serviceAddress = `10.213.${this.net}.${10 + index}`;
    const backendGateway = `10.213.${this.net + 1}.${4 * index + 1}`;
    const backendAddress = `10.213.${this.net + 1}.${4 * index + 2}`;
    const [sRoot, sHost, bRoot, bHost] = ['sr', 'sh', 'br', 'bh'].map((end) => `gp${this.id}${index}${end}`);
    ip('link', 'add', sRoot, 'type', 'veth', 'peer', 'name', sHost);
    ip('link', 'set', sHost, 'netns', name);
    ip('link', 'set', sRoot, 'master', this.bridge);
    ip('link', 'set', sRoot, 'up');
    ip('-n', name, 'addr', 'add', `${serviceAddress}/24`, 'dev', sHost);
    ip('-n', name, 'link', 'set', sHost, 'up');
    ip('-n', name, 'link', 'set', 'lo', 'up');
    ip('link', 'add', bRoot, 'type', 'veth', 'peer', 'name', bHost);
    ip('link', 'set', bHost, 'netns', name);
    ip('addr', 'add', `${backendGateway}/30`, 'dev', bRoot);
    ip('link', 'set', bRoot, 'up');
    ip('-n', name, 'addr', 'add', `${backendAddress}/30`, 'dev', bHost);
    ip('-n', name, 'link', 'set', bHost, 'up');
    // Fixed neighbours: with the link down, packets wait for nothing and are dropped, never reported unreachable.
    ip('neigh', 'replace', backendAddress, 'lladdr', macOf(['-n', name, 'link', 'show', bHost]), 'dev', bRoot, 'nud', 'permanent');
    ip('-n', name, 'neigh', 'replace', backendGateway, 'lladdr', macOf(['link', 'show', bRoot]), 'dev', bHost, 'nud', 'permanent');
    return {
      name,
      exec: ['ip', 'netns', 'exec', name],
      serviceAddress,
      backendGateway,
      relay: (target) => this.relay(backendGateway, target),
      cut: () => ip('link', 'set', bRoot, 'down'),
      heal: () => ip('link', 'set', bRoot, 'up'),
    };
  }

  private async relay(listenHost: string, target: { host: string; port: number }): Promise<number> {
    const server = createServer((downstream) => {
      const upstream = connect(target.port, target.host);
      for (const socket of [downstream, upstream]) {
        this.sockets.add(socket);
        socket.once('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          downstream.destroy();
          upstream.destroy();
        });
      }
      downstream.pipe(upstream);
      upstream.pipe(downstream);
    });
    this.relays.push(server);
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, listenHost, resolve));
    return (server.address() as { port: number }).port;
  }

  /** Closes the relays and deletes the namespaces (their links go with them) and the bridge. */
  async dispose(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(this.relays.map((server) => new Promise((resolve) => server.close(resolve))));
    for (const name of this.hosts) spawnSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
    spawnSync('ip', ['link', 'del', this.bridge], { stdio: 'ignore' });
  }
}

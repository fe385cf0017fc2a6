import type { Clock, InstanceRegistry } from '@gi/domain';
import type { Logger } from '@gi/observability';

/** Each gateway announces itself this often in the store's instance registry. */
export const PRESENCE_INTERVAL_MS = 2_000;
/** A gateway not heard of for this long no longer counts (it died without leaving). */
export const PRESENCE_TTL_MS = 3 * PRESENCE_INTERVAL_MS;
const ROLE = 'gateway';

/**
 * How many gateways share the quotas: this one announces itself every PRESENCE_INTERVAL_MS and learns
 * how many announced themselves within PRESENCE_TTL_MS. A gateway that stops cleanly leaves at once; one
 * that dies is forgotten after the TTL. When the store does not answer, the last count is kept.
 */
export class GatewayPresence {
  private count = 1;
  private timer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly registry: InstanceRegistry,
    private readonly instanceId: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly onCount: (peers: number) => void,
  ) {}

  /** Announces this gateway and keeps doing so until `stop`. */
  static async start(deps: { registry: InstanceRegistry; instanceId: string; clock: Clock; logger: Logger; onCount?: (peers: number) => void }): Promise<GatewayPresence> {
    const presence = new GatewayPresence(deps.registry, deps.instanceId, deps.clock, deps.logger, deps.onCount ?? (() => undefined));
    await presence.beat();
    presence.timer = setInterval(() => void presence.beat(), PRESENCE_INTERVAL_MS).unref();
    return presence;
  }

  /** Live gateways, this one included. */
  peers(): number {
    return this.count;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.registry.leave(ROLE, this.instanceId).catch((err) => this.logger.warn({ err }, 'could not leave the gateway registry'));
  }

  private async beat(): Promise<void> {
    try {
      const count = Math.max(1, await this.registry.heartbeat(ROLE, this.instanceId, this.clock.now(), PRESENCE_TTL_MS));
      if (count !== this.count) this.logger.info({ peers: count }, 'gateways sharing the quotas');
      this.count = count;
      this.onCount(count);
    } catch (err) {
      this.logger.warn({ err, peers: this.count }, 'gateway heartbeat failed; keeping the last count');
    }
  }
}

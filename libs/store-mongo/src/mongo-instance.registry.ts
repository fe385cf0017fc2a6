import type { Collection } from 'mongodb';
import type { InstanceRegistry } from '@gi/domain';
import type { InstanceDocument } from './mongo-documents';

/** The TTL monitor removes an instance this many TTLs after it was last seen. */
const FORGET_AFTER_TTLS = 10;

/** Live service instances (gateways sharing a quota), one document each with the time it was last seen. */
export class MongoInstanceRegistry implements InstanceRegistry {
  constructor(private readonly instances: Collection<InstanceDocument>) {}

  async heartbeat(role: string, instanceId: string, now: number, ttlMs: number): Promise<number> {
    await this.instances.updateOne(
      { _id: `${role}/${instanceId}` },
      { $set: { role, seenAt: now, expireAt: new Date(now + FORGET_AFTER_TTLS * ttlMs) } },
      { upsert: true },
    );
    return this.instances.countDocuments({ role, seenAt: { $gte: now - ttlMs } });
  }

  async leave(role: string, instanceId: string): Promise<void> {
    await this.instances.deleteOne({ _id: `${role}/${instanceId}` });
  }
}

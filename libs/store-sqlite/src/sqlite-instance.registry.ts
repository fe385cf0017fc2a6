import type { InstanceRegistry } from '@gi/domain';
import type { SqliteDatabase } from './sqlite-database';

/** Instances not seen for this many TTLs are deleted by the next heartbeat of their role. */
const FORGET_AFTER_TTLS = 10;

/** Live service instances (gateways sharing a quota), one row each with the time it was last seen. */
export class SqliteInstanceRegistry implements InstanceRegistry {
  private readonly beat;

  constructor(private readonly db: SqliteDatabase) {
    const upsert = db.prepare(`INSERT INTO instances (role, instance_id, seen_at) VALUES (?, ?, ?)
      ON CONFLICT (role, instance_id) DO UPDATE SET seen_at = excluded.seen_at`);
    const forget = db.prepare('DELETE FROM instances WHERE role = ? AND seen_at < ?');
    const count = db.prepare('SELECT COUNT(*) AS n FROM instances WHERE role = ? AND seen_at >= ?');
    this.beat = db.transaction((role: string, instanceId: string, now: number, ttlMs: number) => {
      upsert.run(role, instanceId, now);
      forget.run(role, now - FORGET_AFTER_TTLS * ttlMs);
      return (count.get(role, now - ttlMs) as { n: number }).n;
    });
  }

  async heartbeat(role: string, instanceId: string, now: number, ttlMs: number): Promise<number> {
    return this.beat.immediate(role, instanceId, now, ttlMs);
  }

  async leave(role: string, instanceId: string): Promise<void> {
    this.db.prepare('DELETE FROM instances WHERE role = ? AND instance_id = ?').run(role, instanceId);
  }
}

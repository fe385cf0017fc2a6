/** Which service instances are alive, so replicas can share a limit (each gateway enforces its part). */
export interface InstanceRegistry {
  /** Records that `instanceId` of `role` is alive at `now`; returns how many of `role` were seen within `ttlMs` (itself included). */
  heartbeat(role: string, instanceId: string, now: number, ttlMs: number): Promise<number>;
  /** Forgets an instance that stops, so the others take over its part at once. */
  leave(role: string, instanceId: string): Promise<void>;
}

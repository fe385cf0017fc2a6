/** Replays of stored requests against an integration's draft: how many at once, and what outbound HTTP does. */

/** The most stored requests one replay re-runs (`last` or `ids`): each is a full run in the sandbox. */
export const MAX_REPLAY_REQUESTS = 50;
export const DEFAULT_REPLAY_REQUESTS = 10;

/** What the draft's outbound HTTP does in a replay: fail at once (`block`), or go to the hosts it names (`send`). */
export type ReplayOutbound = 'block' | 'send';
export const REPLAY_OUTBOUND: readonly ReplayOutbound[] = ['block', 'send'];

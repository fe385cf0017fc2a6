import type { Store } from '@gi/domain';
import { timedMethods } from '@gi/observability';
import type { Metrics } from '@gi/observability';

/**
 * The store with every repository operation timed into `gi_store_operation_duration_seconds`
 * (`operation="invocations.claim"`, ...). Everything else (ping, close, a MongoDB store's own fields)
 * is the store's own, called on it.
 */
export function timedStore<S extends Store>(store: S, histogram: Metrics['storeDuration']): S {
  const timed = Object.create(store) as S;
  for (const name of ['ping', 'close'] as const) Object.defineProperty(timed, name, { value: store[name].bind(store) });
  for (const name of ['invocations', 'journal', 'catalog', 'tokens', 'secrets', 'instances'] as const) {
    Object.defineProperty(timed, name, { value: timedMethods(store[name], name, histogram), enumerable: true });
  }
  return timed;
}

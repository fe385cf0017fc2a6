import type { Histogram } from 'prom-client';

/**
 * `target` with each of its methods timed into `histogram` as `operation="<name>.<method>"` and
 * `outcome="ok"` or `"error"` (a rejection or a throw). The wrappers are made once, here; a call costs
 * two clock readings and one observation. Properties that are not functions read through to `target`.
 */
export function timedMethods<T extends object>(target: T, name: string, histogram: Histogram<'operation' | 'outcome'>): T {
  const timed = Object.create(target) as Record<string, unknown>;
  for (const method of methodNames(target)) {
    const original = (target as Record<string, (...args: unknown[]) => unknown>)[method];
    const ok = histogram.labels({ operation: `${name}.${method}`, outcome: 'ok' });
    const failed = histogram.labels({ operation: `${name}.${method}`, outcome: 'error' });
    // On every store call: a clock reading is a double (no BigInt), and nothing else is made but the
    // two callbacks an awaited result needs.
    timed[method] = function (...args: unknown[]): unknown {
      const started = performance.now();
      let result: unknown;
      try {
        result = original.apply(target, args);
      } catch (error) {
        failed.observe((performance.now() - started) / 1000);
        throw error;
      }
      if (!(result instanceof Promise)) {
        ok.observe((performance.now() - started) / 1000);
        return result;
      }
      return result.then(
        (value) => {
          ok.observe((performance.now() - started) / 1000);
          return value;
        },
        (error: unknown) => {
          failed.observe((performance.now() - started) / 1000);
          throw error;
        },
      );
    };
  }
  return timed as T;
}

/** Own and inherited methods (a class's prototype), except the constructor and Object's own. */
function methodNames(target: object): string[] {
  const names = new Set<string>();
  for (let layer: object | null = target; layer && layer !== Object.prototype; layer = Object.getPrototypeOf(layer) as object | null) {
    for (const key of Object.getOwnPropertyNames(layer)) {
      if (key === 'constructor') continue;
      const descriptor = Object.getOwnPropertyDescriptor(layer, key);
      if (descriptor && typeof descriptor.value === 'function') names.add(key);
    }
  }
  return [...names];
}

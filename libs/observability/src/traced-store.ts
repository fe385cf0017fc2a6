import { context, SpanKind, trace } from '@opentelemetry/api';
import type { Store } from '@gi/domain';
import { giTracer, markFailed } from './trace-spans';

/** `db.system.name` of the store. */
export type StoreSystem = 'sqlite' | 'mongodb';

/** The parts of the store whose operations are traced (the instance registry's heartbeats are not). */
const TRACED_PARTS = new Set<PropertyKey>(['invocations', 'journal', 'catalog', 'tokens']);

/**
 * Calls `method` of `part` in a client span `store <part>.<method>`, when it is made within a traced
 * operation (a call, a job): the sweeps and refreshes running on their own make no root spans of their own.
 */
function traceCall(system: StoreSystem, part: string, name: string, method: (...args: unknown[]) => unknown, self: object, args: unknown[]): unknown {
  if (!trace.getSpan(context.active())) return method.apply(self, args);
  const span = giTracer().startSpan(`store ${part}.${name}`, {
    kind: SpanKind.CLIENT,
    attributes: { 'db.system.name': system, 'db.collection.name': part, 'db.operation.name': name },
  });
  let result: unknown;
  try {
    result = context.with(trace.setSpan(context.active(), span), () => method.apply(self, args));
  } catch (error) {
    markFailed(span, error);
    span.end();
    throw error;
  }
  if (!(result instanceof Promise)) {
    span.end();
    return result;
  }
  return result.then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      markFailed(span, error);
      span.end();
      throw error;
    },
  );
}

function tracedPart<Part extends object>(part: Part, partName: string, system: StoreSystem): Part {
  return new Proxy(part, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return (...args: unknown[]) => traceCall(system, partName, property, value as (...args: unknown[]) => unknown, target, args);
    },
  });
}

/** The store with a span per operation on invocations, journals, the catalog and tokens; everything else passes through. */
export function tracedStore<S extends Store>(store: S, system: StoreSystem): S {
  const parts = new Map<PropertyKey, object>();
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (TRACED_PARTS.has(property) && typeof value === 'object' && value !== null) {
        if (!parts.has(property)) parts.set(property, tracedPart(value, String(property), system));
        return parts.get(property);
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

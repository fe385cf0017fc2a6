import type { Logger } from 'pino';

/**
 * OpenTelemetry tracing of one process: the Node SDK, configured by the standard `OTEL_*` variables
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/), exporting spans
 * only. Off unless an exporter is named: the SDK is then never loaded and every span made through
 * `@opentelemetry/api` is the API's no-op.
 */
export interface Tracing {
  readonly enabled: boolean;
  /** Ends tracing, exporting the spans not sent yet (at most SHUTDOWN_MS). */
  shutdown(): Promise<void>;
}

/** How long the export of the last spans may hold up the end of the process. */
const SHUTDOWN_MS = 5000;

const OFF: Tracing = { enabled: false, shutdown: async () => undefined };

let active = false;

/** True once this process exports traces: the places that would only make no-op spans skip them. */
export const tracingEnabled = (): boolean => active;

const isTrue = (value: string | undefined) => value?.trim().toLowerCase() === 'true';
const listOf = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== '');

/**
 * Whether the environment asks for traces: an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), or OTEL_TRACES_EXPORTER naming an exporter other than otlp
 * (console, zipkin). OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off whatever else is set.
 */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  if (isTrue(env.OTEL_SDK_DISABLED)) return false;
  const exporters = listOf(env.OTEL_TRACES_EXPORTER);
  if (exporters[0] === 'none') return false;
  if (exporters.some((name) => name !== 'otlp')) return true;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

/** The service name, unless the environment names one (OTEL_SERVICE_NAME, or service.name in OTEL_RESOURCE_ATTRIBUTES). */
function defaultServiceName(env: NodeJS.ProcessEnv, name: string): string | undefined {
  if (env.OTEL_SERVICE_NAME?.trim()) return undefined;
  if (/(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '')) return undefined;
  return name;
}

/** An endpoint as it may be logged: scheme, host and path, never credentials or a query. */
function shown(endpoint: string | undefined): string | undefined {
  if (!endpoint) return undefined;
  try {
    const url = new URL(endpoint);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

/**
 * Starts tracing when the environment asks for it (tracingWanted). Call it first, before the process
 * opens anything it traces. The SDK reads the rest of its settings (protocol, sampler, batch sizes,
 * propagators) from the same variables; metrics and logs stay with Prometheus and the JSON log.
 */
export async function startTracing(env: NodeJS.ProcessEnv, serviceName: string, logger: Logger): Promise<Tracing> {
  if (!tracingWanted(env)) return OFF;
  // Loaded only now: a process without tracing never pays for the SDK.
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const sdk = new NodeSDK({ serviceName: defaultServiceName(env, serviceName), metricReaders: [], logRecordProcessors: [], instrumentations: [] });
  sdk.start();
  active = true;
  const endpoint = shown(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT);
  logger.info({ exporter: env.OTEL_TRACES_EXPORTER ?? 'otlp', endpoint, sampler: env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on' }, 'tracing on');
  return {
    enabled: true,
    async shutdown() {
      active = false;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_MS)));
      try {
        await Promise.race([sdk.shutdown(), late]);
      } catch (err) {
        logger.warn({ err }, 'the last spans could not be exported');
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

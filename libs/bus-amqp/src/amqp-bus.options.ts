import { isValidName } from '@gi/domain';

/** What the bus reports; a pino logger fits. */
export interface BusLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface AmqpJobBusOptions {
  /** `amqp://user:password@host:port/vhost`. */
  url: string;
  /** Prefix of every exchange and queue name; deployments sharing a broker use different ones. Default `gi`. */
  prefix?: string;
  /** Pools whose queues are declared at connect; others are declared on first publish or consume. */
  pools?: string[];
  /** A job is handed out at most this many times, then dead-lettered. Default 5. */
  maxDeliveries?: number;
  /** AMQP heartbeat: a silent broker (or client) is given up after about twice this. Default 10 s. */
  heartbeatSeconds?: number;
  /** Limit for opening the TCP connection and the AMQP handshake. Default 5000 ms. */
  connectTimeoutMs?: number;
  /** publish() rejects when the broker has not confirmed by then. Default 5000 ms. */
  publishTimeoutMs?: number;
  /** A requeued job is held this long first, so a failing dependency is not retried in a tight loop. Default 100 ms. */
  requeueDelayMs?: number;
  /** Reconnect backoff (doubling, with jitter). */
  reconnect?: {
    initialDelayMs?: number;
    maxDelayMs?: number;
    /** Retries of the first connection before connect() fails. Default 3. */
    initialRetries?: number;
  };
  /** Shown by the broker in its connection list. */
  connectionName?: string;
  logger?: BusLogger;
  /** Told of each message this process dead-letters as unreadable (for metrics). */
  onMalformed?: () => void;
}

export interface ResolvedBusOptions {
  url: string;
  prefix: string;
  pools: string[];
  maxDeliveries: number;
  heartbeatSeconds: number;
  connectTimeoutMs: number;
  publishTimeoutMs: number;
  requeueDelayMs: number;
  reconnectInitialDelayMs: number;
  reconnectMaxDelayMs: number;
  initialRetries: number;
  connectionName: string;
  logger: BusLogger;
  onMalformed: () => void;
}

const silent: BusLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

const positive = (name: string, value: number, min = 1): number => {
  if (!Number.isInteger(value) || value < min) throw new Error(`AMQP bus option ${name} must be an integer of at least ${min}, got ${value}.`);
  return value;
};

export function resolveBusOptions(options: AmqpJobBusOptions): ResolvedBusOptions {
  const prefix = options.prefix ?? 'gi';
  if (!isValidName(prefix)) throw new Error(`AMQP bus prefix "${prefix}" must be letters, digits, '_', '.', '-' and start with a letter or digit.`);
  const pools = options.pools ?? [];
  for (const pool of pools) if (!isValidName(pool)) throw new Error(`Pool name "${pool}" is invalid.`);
  return {
    url: options.url,
    prefix,
    pools,
    maxDeliveries: positive('maxDeliveries', options.maxDeliveries ?? 5),
    heartbeatSeconds: positive('heartbeatSeconds', options.heartbeatSeconds ?? 10, 0),
    connectTimeoutMs: positive('connectTimeoutMs', options.connectTimeoutMs ?? 5000),
    publishTimeoutMs: positive('publishTimeoutMs', options.publishTimeoutMs ?? 5000),
    requeueDelayMs: positive('requeueDelayMs', options.requeueDelayMs ?? 100, 0),
    reconnectInitialDelayMs: positive('reconnect.initialDelayMs', options.reconnect?.initialDelayMs ?? 200),
    // A broker back from an outage is found within this: the work stored meanwhile runs within seconds.
    reconnectMaxDelayMs: positive('reconnect.maxDelayMs', options.reconnect?.maxDelayMs ?? 5_000),
    initialRetries: positive('reconnect.initialRetries', options.reconnect?.initialRetries ?? 3, 0),
    connectionName: options.connectionName ?? `${prefix} bus`,
    logger: options.logger ?? silent,
    onMalformed: options.onMalformed ?? (() => undefined),
  };
}

/** The URL with the heartbeat set (unless it names one) and, for messages, without credentials. */
export function connectionUrl(options: ResolvedBusOptions): { url: string; display: string } {
  let parsed: URL;
  try {
    parsed = new URL(options.url);
  } catch {
    throw new Error('AMQP_URL is not a valid URL (expected amqp://user:password@host:port/vhost).');
  }
  if (parsed.protocol !== 'amqp:' && parsed.protocol !== 'amqps:') throw new Error(`AMQP_URL must start with amqp:// or amqps://, got ${parsed.protocol}//.`);
  if (!parsed.searchParams.has('heartbeat')) parsed.searchParams.set('heartbeat', String(options.heartbeatSeconds));
  const display = `${parsed.protocol}//${parsed.host}${parsed.pathname === '' ? '/' : parsed.pathname}`;
  return { url: parsed.toString(), display };
}

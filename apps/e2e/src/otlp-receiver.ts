import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as the test reads it, with the name of the service that exported it. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
}
interface OtlpExport {
  resourceSpans?: Array<{ resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: Array<{ spans?: OtlpSpan[] }> }>;
}

const valueOf = (value: OtlpValue) => value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue ?? ''));
const attributesOf = (list: OtlpAttribute[] = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/**
 * An OTLP/HTTP trace receiver on 127.0.0.1 (`POST /v1/traces`, the JSON encoding: the services export
 * with OTEL_EXPORTER_OTLP_PROTOCOL=http/json). It keeps every span received.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !/json/.test(req.headers['content-type'] ?? '')) {
        res.writeHead(415).end();
        return;
      }
      this.keep(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  private constructor() {}

  static async start(): Promise<OtlpReceiver> {
    const receiver = new OtlpReceiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  private keep(body: OtlpExport): void {
    for (const resourceSpans of body.resourceSpans ?? []) {
      const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({ service, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '', name: span.name, kind: span.kind, attributes: attributesOf(span.attributes) });
        }
      }
    }
  }

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** What a service needs to export its spans here, at once. */
  get env(): Record<string, string> {
    return { OTEL_EXPORTER_OTLP_ENDPOINT: this.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100' };
  }

  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  /** Waits until the spans of `traceId` include one matching each of `expected`; returns them all. */
  async awaitTrace(traceId: string, expected: Array<(span: ReceivedSpan) => boolean>, timeoutMs = 15_000): Promise<ReceivedSpan[]> {
    const deadline = Date.now() + timeoutMs;
    while (!expected.every((match) => this.trace(traceId).some(match))) {
      if (Date.now() > deadline) throw new Error(`trace ${traceId} is missing spans; it has:\n${spanTree(this.trace(traceId))}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return this.trace(traceId);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The spans of one trace as an indented tree: name, service, and the span id each hangs from. */
export function spanTree(spans: ReceivedSpan[]): string {
  const ids = new Set(spans.map((s) => s.spanId));
  const lines: string[] = [];
  const walk = (parent: string, depth: number) => {
    for (const span of spans.filter((s) => s.parentSpanId === parent)) {
      lines.push(`${'  '.repeat(depth)}${span.name}  [${span.service}] (span ${span.spanId}, parent ${span.parentSpanId || 'none'})`);
      walk(span.spanId, depth + 1);
    }
  };
  for (const root of new Set(spans.filter((s) => !ids.has(s.parentSpanId)).map((s) => s.parentSpanId))) walk(root, 0);
  return lines.join('\n');
}

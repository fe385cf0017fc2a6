import { openApiDrift } from './openapi-replies';
import { ADMIN_TOKEN } from './service-process';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body when it is JSON, else undefined. */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface SendOptions {
  /** Check the reply against docs/openapi.yaml (openapi-replies.ts); off only for calls outside the API on purpose. */
  checkSpec?: boolean;
}

/** Sends a request; the reply must match docs/openapi.yaml, else the call fails naming the drift. */
export async function send(url: string, init: RequestInit = {}, { checkSpec = true }: SendOptions = {}): Promise<Reply> {
  const response = await fetch(url, init);
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const reply = { status: response.status, headers: response.headers, text, json };
  if (checkSpec) {
    const drift = await openApiDrift(init.method ?? 'GET', url, reply);
    if (drift) throw new Error(`Reply differs from docs/openapi.yaml: ${drift}`);
  }
  return reply;
}

/** A small client for the service under test: admin calls, webhook calls and polls. */
export class Api {
  constructor(
    readonly baseUrl: string,
    readonly platform = 'Platform',
  ) {}

  admin(method: string, path: string, body?: unknown): Promise<Reply> {
    return send(`${this.baseUrl}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  /** Defines the entity, deploys the connector and mints a permanent token; returns the token. */
  async setUp(botId: string, entityName: string, integrationId: string, code: string, extra: Record<string, unknown> = {}): Promise<string> {
    expect((await this.admin('PUT', `/bots/${botId}/entities/${entityName}`, {})).status).toBe(200);
    const deployed = await this.admin('PUT', `/bots/${botId}/integrations/${integrationId}`, { entityName, code, ...extra });
    expect(deployed.status).toBe(200);
    const minted = await this.admin('POST', `/bots/${botId}/tokens`, { label: 'e2e' });
    expect(minted.status).toBe(201);
    return minted.json.token as string;
  }

  webhookUrl(botId: string, entityName: string, integrationId: string, query = '', endpoint = 'GenericIntegration'): string {
    return `${this.baseUrl}/api/${this.platform}/${botId}/${entityName}/${integrationId}/${endpoint}${query ? `?${query}` : ''}`;
  }

  call(url: string, token: string | undefined, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Reply> {
    return send(url, {
      method: 'POST',
      ...init,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...init.headers },
    });
  }

  postJson(url: string, token: string | undefined, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
    return this.call(url, token, { body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });
  }

  poll(botId: string, token: string, invocationId: string, query = ''): Promise<Reply> {
    const url = `${this.baseUrl}/api/${this.platform}/${botId}/GetGenericIntegrationResponse?invocationId=${encodeURIComponent(invocationId)}${query ? `&${query}` : ''}`;
    return send(url, { headers: { authorization: `Bearer ${token}` } });
  }
}

import jwt from 'jsonwebtoken';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api, send } from './api-client';
import { example } from './connectors';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

describe('authentication over HTTP', () => {
  let service: ServiceProcess;
  let api: Api;
  let token: string;
  let claims: jwt.JwtPayload;
  let secret: string;
  const url = () => api.webhookUrl('acme', 'Order', 'ack');
  const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const statusWith = async (authorization: string | undefined) => {
    const reply = await send(url(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
      body: '{"orderId":1}',
    });
    return { status: reply.status, challenge: reply.headers.get('www-authenticate'), body: reply.text };
  };

  beforeAll(async () => {
    service = await startService();
    api = new Api(service.baseUrl);
    token = await api.setUp('acme', 'Order', 'ack', example('ack'));
    claims = jwt.decode(token) as jwt.JwtPayload;
    secret = readFileSync(join(service.dataDir, 'token-secret'), 'utf8').trim();
  });
  afterAll(() => service.dispose());

  it('accepts the bot\'s own token', async () => {
    expect((await statusWith(`Bearer ${token}`)).status).toBe(200);
  });

  it('asks for a bearer token without an error code when none is sent', async () => {
    const reply = await statusWith(undefined);
    expect(reply.status).toBe(401);
    expect(reply.challenge).toBe('Bearer realm="generic-integration"');
  });

  const attacks: Array<[string, () => string]> = [
    ['alg none', () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`],
    ['alg NoNe', () => `${b64({ alg: 'NoNe', typ: 'JWT' })}.${b64(claims)}.`],
    ['alg none with the original signature', () => `${b64({ alg: 'none' })}.${b64(claims)}.${token.split('.')[2]}`],
    ['another key', () => jwt.sign(claims, 'x'.repeat(64), { algorithm: 'HS256' })],
    ['HS384 with the right key', () => jwt.sign(claims, secret, { algorithm: 'HS384' })],
    ['tampered payload', () => `${token.split('.')[0]}.${b64({ ...claims, jti: 'other' })}.${token.split('.')[2]}`],
    ['tampered signature', () => `${token.slice(0, -4)}AAAA`],
    ['expired', () => jwt.sign({ ...claims, exp: Math.floor(Date.now() / 1000) - 120 }, secret, { algorithm: 'HS256' })],
    ['unregistered token id', () => jwt.sign({ ...claims, jti: 'forged' }, secret, { algorithm: 'HS256' })],
    ['wrong audience', () => jwt.sign({ ...claims, aud: 'admin' }, secret, { algorithm: 'HS256' })],
  ];

  it.each(attacks)('refuses %s with 401 invalid_token', async (_name, forge) => {
    const reply = await statusWith(`Bearer ${forge()}`);
    expect(reply.status).toBe(401);
    expect(reply.challenge).toContain('error="invalid_token"');
    expect(reply.body).not.toContain(secret);
  });

  it.each(['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer  a b', 'bearer', 'Token abc'])('refuses the malformed header %p', async (header) => {
    const reply = await statusWith(header);
    expect(reply.status).toBe(401);
    expect(reply.challenge).toContain('invalid_token');
  });

  it('refuses a short-lived token that lost its exp', async () => {
    const short = await api.admin('POST', '/bots/acme/tokens', { ttlSeconds: 120 });
    expect((await statusWith(`Bearer ${short.json.token}`)).status).toBe(200);
    const { exp: _exp, ...rest } = jwt.decode(short.json.token) as jwt.JwtPayload;
    expect((await statusWith(`Bearer ${jwt.sign(rest, secret, { algorithm: 'HS256' })}`)).status).toBe(401);
  });

  it('refuses another bot\'s token with 403', async () => {
    const other = await api.admin('POST', '/bots/other/tokens', {});
    const reply = await statusWith(`Bearer ${other.json.token}`);
    expect(reply.status).toBe(403);
  });

  it('revokes a token at once, for calls and polls', async () => {
    const minted = await api.admin('POST', '/bots/acme/tokens', { label: 'to revoke' });
    const started = await api.postJson(api.webhookUrl('acme', 'Order', 'ack', 'asyncResponse=true'), minted.json.token, { orderId: 3 });
    expect(started.status).toBe(202);
    expect((await api.admin('DELETE', `/bots/acme/tokens/${minted.json.tokenId}`)).status).toBe(204);
    expect((await statusWith(`Bearer ${minted.json.token}`)).status).toBe(401);
    expect((await api.poll('acme', minted.json.token, started.json.invocationId)).status).toBe(401);
    expect((await api.admin('DELETE', '/bots/acme/tokens/unknown')).status).toBe(404);
  });

  it('protects the control API with the admin token', async () => {
    expect((await send(`${service.baseUrl}/admin/bots`)).status).toBe(401);
    expect((await send(`${service.baseUrl}/admin/bots`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    expect((await api.admin('GET', '/bots')).json.bots).toEqual(expect.arrayContaining(['acme']));
  });

  it('never writes tokens into the logs', () => {
    const logs = service.output.join('\n');
    expect(logs).not.toContain(token);
    expect(logs).not.toContain(secret);
  });
});

import { eventPath, pollLocation, pollPath, webhookApiRoot, webhookCallPath } from './webhook-urls';

describe('the webhook API\'s URLs', () => {
  it('root the API at the base URL, without its trailing slashes', () => {
    expect(webhookApiRoot('Platform')).toBe('/api/Platform');
    expect(webhookApiRoot('Platform', 'https://gi.example.com//')).toBe('https://gi.example.com/api/Platform');
    expect(webhookApiRoot('Platform', 'https://gi.example.com/base')).toBe('https://gi.example.com/base/api/Platform');
  });

  it('name each endpoint of an integration and of a bot, every segment encoded', () => {
    const target = { botId: 'acme', entityName: 'Order', integrationId: 'crm' };
    expect(webhookCallPath(target)).toBe('/acme/Order/crm/GenericIntegration');
    expect(webhookCallPath(target, 'GenericIntegrationFileTransfer')).toBe('/acme/Order/crm/GenericIntegrationFileTransfer');
    expect(webhookCallPath({ botId: 'a/b', entityName: 'c d', integrationId: 'e?f' })).toBe('/a%2Fb/c%20d/e%3Ff/GenericIntegration');
    expect(pollPath('a/b')).toBe('/a%2Fb/GetGenericIntegrationResponse');
    expect(eventPath('a b')).toBe('/a%20b/GenericIntegrationEvent');
    expect(webhookApiRoot('P/x')).toBe('/api/P%2Fx');
  });

  it('give an invocation\'s poll URL as its Location', () => {
    expect(pollLocation('Platform', 'acme', 'inv-1')).toBe('/api/Platform/acme/GetGenericIntegrationResponse?invocationId=inv-1');
  });
});

import type { Webhook } from '../control-api';
import { apiRootFor, apiRootFromWebhook, eventUrl, genericIntegrationUrl, pollUrl, withWait } from './public-api';

const webhook = (urls: Webhook['integrations'][number]['urls']): Webhook => ({
  baseUrl: 'https://hooks.example.com',
  botId: 'acme',
  integrations: [{ integrationId: 'ack', entityName: 'Order', urls }],
});

describe('public webhook URLs', () => {
  it('takes the API root the service advertises, platform segment included', () => {
    const root = 'https://hooks.example.com/api/Tenant1';
    expect(apiRootFromWebhook(webhook({ sync: `${root}/acme/Order/ack/GenericIntegration`, poll: `${root}/acme/GetGenericIntegrationResponse?invocationId=` }))).toBe(root);
    expect(apiRootFromWebhook(webhook({ sync: `${root}/acme/Order/ack/GenericIntegration` }))).toBe(root);
    expect(apiRootFromWebhook(webhook({ sync: 'https://elsewhere/whatever' }))).toBeNull();
    expect(apiRootFromWebhook({ ...webhook({ sync: '' }), integrations: [] })).toBeNull();
    // A bot without integrations still shows its poll and event URLs.
    expect(apiRootFromWebhook({ ...webhook({ sync: '' }), integrations: [], eventUrl: `${root}/acme/GenericIntegrationEvent?invocationId={invocationId}&name={name}` })).toBe(root);
  });

  it('builds the call and poll URLs with the caller query kept in order', () => {
    const root = apiRootFor('http://127.0.0.1:8080/', 'Platform');
    expect(root).toBe('http://127.0.0.1:8080/api/Platform');
    expect(genericIntegrationUrl(root, { botId: 'acme', entityName: 'Order', integrationId: 'ack' }, [['b', '2'], ['a', 'x y']], true)).toBe(
      'http://127.0.0.1:8080/api/Platform/acme/Order/ack/GenericIntegration?b=2&a=x+y&asyncResponse=true',
    );
    expect(withWait(pollUrl(root, 'acme', 'inv 1'), 20)).toBe(
      'http://127.0.0.1:8080/api/Platform/acme/GetGenericIntegrationResponse?invocationId=inv+1&waitSeconds=20',
    );
    expect(eventUrl(root, 'acme', 'inv 1', 'approved & paid')).toBe('http://127.0.0.1:8080/api/Platform/acme/GenericIntegrationEvent?invocationId=inv+1&name=approved+%26+paid');
  });
});

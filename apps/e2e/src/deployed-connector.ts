import { Api } from './api-client';
import { startService } from './service-process';
import type { ServiceProcess, StartOptions } from './service-process';

/**
 * For the describe block it is called in: the built embedded service, started before its tests with
 * one connector deployed (its entity defined, a caller's token minted) and stopped after them.
 */
export function serviceWithConnector(botId: string, entityName: string, integrationId: string, code: string, options?: StartOptions) {
  let started: { service: ServiceProcess; api: Api; token: string } | undefined;
  beforeAll(async () => {
    const service = await startService(options);
    const api = new Api(service.baseUrl);
    started = { service, api, token: await api.setUp(botId, entityName, integrationId, code) };
  });
  afterAll(() => started?.service.dispose());
  const get = () => {
    if (!started) throw new Error('the service starts in beforeAll');
    return started;
  };
  return {
    get service(): ServiceProcess {
      return get().service;
    },
    get api(): Api {
      return get().api;
    },
    /** The caller's token for the bot. */
    get token(): string {
      return get().token;
    },
    /** The connector's webhook URL, with a query string when given. */
    url: (query = '') => get().api.webhookUrl(botId, entityName, integrationId, query),
  };
}

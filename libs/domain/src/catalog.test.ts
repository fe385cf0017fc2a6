import { DEFAULT_CONNECTOR_LIMITS, integrationSettingsOf, runLimitsOf, withDefaultLimits } from './catalog';
import type { IntegrationDefinition } from './catalog';

describe('the catalog', () => {
  const definition: IntegrationDefinition = {
    botId: 'acme',
    integrationId: 'crm',
    version: 4,
    deployedAt: 1000,
    entityName: 'Order',
    code: 'return 1;',
    sources: [{ path: 'src/index.ts', content: 'export {}' }],
    pool: 'slow',
    timeoutSeconds: 30,
    allowedHosts: ['api.example.com'],
    limits: { ...DEFAULT_CONNECTOR_LIMITS },
    callbackUrl: 'https://hooks.example.com/',
    inboundAuth: { scheme: 'github', secret: 'GH' },
  };

  it('takes a version\'s settings without its names and dates, in a stable order', () => {
    const { botId: _b, integrationId: _i, version: _v, deployedAt: _d, ...settings } = definition;
    expect(integrationSettingsOf(definition)).toEqual(settings);
    expect(Object.keys(integrationSettingsOf(definition))).toEqual([
      'entityName', 'code', 'sources', 'pool', 'timeoutSeconds', 'allowedHosts', 'limits', 'callbackUrl', 'inboundAuth',
    ]);
  });

  it('leaves out no sources, empty sources, and a bot token as inbound auth: the defaults', () => {
    for (const lacking of [{ sources: undefined, inboundAuth: undefined }, { sources: [], inboundAuth: { scheme: 'bearer' as const } }]) {
      const settings = integrationSettingsOf({ ...definition, ...lacking });
      expect('sources' in settings).toBe(false);
      expect('inboundAuth' in settings).toBe(false);
    }
  });

  it('gives a run its limits in bytes and milliseconds', () => {
    expect(runLimitsOf({ memoryMiB: 2, cpuSeconds: 3, responseBodyKiB: 5, logKiB: 7, pendingCalls: 11 })).toEqual({
      memoryBytes: 2 * 1024 * 1024,
      cpuMs: 3000,
      responseBodyBytes: 5 * 1024,
      logBytes: 7 * 1024,
      pendingCalls: 11,
    });
  });

  it('completes stored limits with the defaults, and gives the defaults for none', () => {
    expect(withDefaultLimits({ memoryMiB: 128 })).toEqual({ ...DEFAULT_CONNECTOR_LIMITS, memoryMiB: 128 });
    expect(withDefaultLimits(null)).toEqual(DEFAULT_CONNECTOR_LIMITS);
    expect(withDefaultLimits(undefined)).toEqual(DEFAULT_CONNECTOR_LIMITS);
  });
});

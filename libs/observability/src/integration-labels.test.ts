import { IntegrationLabels, OTHER } from './integration-labels';

describe('IntegrationLabels', () => {
  it('labels every run _other while off', () => {
    expect(new IntegrationLabels({ enabled: false, limit: 100 }).of('acme', 'crm')).toEqual({ bot: OTHER, integration: OTHER });
  });

  it('gives the first `limit` pairs labels of their own and every later pair _other', () => {
    const labels = new IntegrationLabels({ enabled: true, limit: 2 });
    expect(labels.of('acme', 'crm')).toEqual({ bot: 'acme', integration: 'crm' });
    expect(labels.of('acme', 'erp')).toEqual({ bot: 'acme', integration: 'erp' });
    expect(labels.of('zeta', 'crm')).toEqual({ bot: OTHER, integration: OTHER });
    expect(labels.of('acme', 'crm')).toEqual({ bot: 'acme', integration: 'crm' });
  });
});

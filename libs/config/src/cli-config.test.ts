import { resolve } from 'node:path';
import { ConfigError } from './service-config';
import { DEFAULT_CLI_URL, parseCliConfig } from './cli-config';

describe('parseCliConfig', () => {
  it('defaults to the local embedded service and the admin token file under ./data', () => {
    expect(parseCliConfig({})).toEqual({
      url: DEFAULT_CLI_URL,
      adminToken: null,
      dataDir: './data',
      adminTokenFile: resolve('./data/admin-token'),
      connectorTrustedAddresses: [],
    });
  });

  it('reads the environment and lets command-line values win', () => {
    const env = { GI_URL: 'https://gi.example.com/', GI_ADMIN_TOKEN: 'from-env', DATA_DIR: '/var/gi' };
    expect(parseCliConfig(env)).toMatchObject({ url: 'https://gi.example.com', adminToken: 'from-env', adminTokenFile: '/var/gi/admin-token' });
    expect(parseCliConfig(env, { url: 'http://other:9000/base/', adminToken: 'from-flag' })).toMatchObject({
      url: 'http://other:9000/base',
      adminToken: 'from-flag',
    });
  });

  it('treats empty values as unset', () => {
    expect(parseCliConfig({ GI_URL: '', GI_ADMIN_TOKEN: ' ', DATA_DIR: '' })).toMatchObject({ url: DEFAULT_CLI_URL, adminToken: null, dataDir: './data' });
  });

  it('lists every problem at once', () => {
    try {
      parseCliConfig({ GI_URL: 'ftp://nope' }, { adminToken: '' });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toEqual([
        'GI_URL: "ftp://nope" is not an http(s) URL such as http://127.0.0.1:8080',
        '--admin-token: must not be empty',
      ]);
    }
  });

  it('reads CONNECTOR_TRUSTED_ADDRESSES as the service does (for gi connector run)', () => {
    expect(parseCliConfig({ CONNECTOR_TRUSTED_ADDRESSES: ' 127.0.0.1, ::1 ' }).connectorTrustedAddresses).toEqual(['127.0.0.1', '::1']);
    expect(parseCliConfig({ CONNECTOR_TRUSTED_ADDRESSES: ' ' }).connectorTrustedAddresses).toEqual([]);
    expect(() => parseCliConfig({ CONNECTOR_TRUSTED_ADDRESSES: '127.1' })).toThrow(
      'CONNECTOR_TRUSTED_ADDRESSES: comma-separated IP addresses such as 127.0.0.1 or ::1',
    );
  });

  it('names --url when the bad URL came from the command line', () => {
    expect(() => parseCliConfig({}, { url: 'not a url' })).toThrow('--url: "not a url" is not an http(s) URL');
  });
});

import { parseServiceConfig } from '@gi/config';
import { loggableSettings } from './loggable-settings';

describe('loggableSettings', () => {
  it('shows every setting but no credential', () => {
    const config = parseServiceConfig({
      ADMIN_TOKEN: 'admin-token-0123456789abcdefXYZ',
      TOKEN_SECRET: 'token-secret-0123456789abcdef0123456789',
      AMQP_URL: 'amqp://gi:rabbit-pass@broker:5672/gi',
      STORE_URL: 'mongodb://gi:mongo-pass@m0,m1/gi?replicaSet=rs0',
      EXECUTOR_CONCURRENCY: '8',
      SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
      SECRETS_KEY_PREVIOUS: Buffer.alloc(32, 2).toString('base64'),
    });
    const shown = loggableSettings(config);
    const text = JSON.stringify(shown);
    for (const secret of ['admin-token-0123456789', 'token-secret-0123456789', 'rabbit-pass', 'mongo-pass', 'AQEBAQEB', 'AgICAgIC']) expect(text).not.toContain(secret);
    expect(shown).toMatchObject({
      ADMIN_TOKEN: '[redacted]',
      TOKEN_SECRET: '[redacted]',
      SECRETS_KEY: '[redacted]',
      SECRETS_KEY_PREVIOUS: '[redacted]',
      AMQP_URL: 'amqp://gi:[redacted]@broker:5672/gi',
      STORE_URL: 'mongodb://gi:[redacted]@m0,m1/gi?replicaSet=rs0',
      EXECUTOR_CONCURRENCY: 8,
      ACCESS_LOG: 'info',
      SQLITE_SYNCHRONOUS: 'normal',
    });
  });
});

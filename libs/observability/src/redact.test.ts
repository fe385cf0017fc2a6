import { redactUrl } from './redact';

describe('redactUrl', () => {
  it('hides passwords and credential parameters, keeps the rest', () => {
    expect(redactUrl('amqp://guest:s3cret@127.0.0.1:5672/')).toBe('amqp://guest:[redacted]@127.0.0.1:5672/');
    expect(redactUrl('mongodb://u:p%40ss@m0,m1/gi?replicaSet=rs0&authSource=admin')).toBe('mongodb://u:[redacted]@m0,m1/gi?replicaSet=rs0&authSource=admin');
    expect(redactUrl('https://h/x?api_key=abc&token=def&page=2')).toBe('https://h/x?api_key=[redacted]&token=[redacted]&page=2');
    expect(redactUrl('amqp://127.0.0.1')).toBe('amqp://127.0.0.1');
  });

  it('redacts text that is not a URL whole', () => {
    expect(redactUrl('not a url with secret')).toBe('[redacted]');
  });
});

import { withDatabase } from './mongo-test-server';

describe('withDatabase', () => {
  it('puts the database in the path and keeps hosts, credentials and options', () => {
    expect(withDatabase('mongodb://127.0.0.1:27017/?directConnection=true', 'gi-e2e')).toBe('mongodb://127.0.0.1:27017/gi-e2e?directConnection=true');
    expect(withDatabase('mongodb://u:p@a:1,b:2/old?replicaSet=rs0&authSource=admin', 'gi')).toBe('mongodb://u:p@a:1,b:2/gi?replicaSet=rs0&authSource=admin');
    expect(withDatabase('mongodb+srv://cluster.example.com', 'gi')).toBe('mongodb+srv://cluster.example.com/gi');
    expect(() => withDatabase('postgres://x/y', 'gi')).toThrow('Not a MongoDB URL');
  });
});

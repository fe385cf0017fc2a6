import { directUrl, withDatabase } from './mongo-test-server';

describe('withDatabase', () => {
  it('puts the database in the path and keeps hosts, credentials and options', () => {
    expect(withDatabase('mongodb://127.0.0.1:27017/?directConnection=true', 'gi-e2e')).toBe('mongodb://127.0.0.1:27017/gi-e2e?directConnection=true');
    expect(withDatabase('mongodb://u:p@a:1,b:2/old?replicaSet=rs0&authSource=admin', 'gi')).toBe('mongodb://u:p@a:1,b:2/gi?replicaSet=rs0&authSource=admin');
    expect(withDatabase('mongodb+srv://cluster.example.com', 'gi')).toBe('mongodb+srv://cluster.example.com/gi');
    expect(() => withDatabase('postgres://x/y', 'gi')).toThrow('Not a MongoDB URL');
  });
});

describe('directUrl', () => {
  it('points at one member directly, keeping credentials, database and options but not the set name', () => {
    expect(directUrl('mongodb://u:p%40@a:1,b:2,c:3/gi?replicaSet=rs0&authSource=admin&tls=true', 'b:2')).toBe(
      'mongodb://u:p%40@b:2/gi?authSource=admin&tls=true&directConnection=true',
    );
    expect(directUrl('mongodb://a:1,b:2/?replicaSet=rs0', 'a:1')).toBe('mongodb://a:1/?directConnection=true');
    expect(directUrl('mongodb://a:1,b:2', 'b:2')).toBe('mongodb://b:2/?directConnection=true');
    expect(() => directUrl('mongodb+srv://cluster.example.com/gi', 'a:1')).toThrow('Not a mongodb:// URL');
  });
});

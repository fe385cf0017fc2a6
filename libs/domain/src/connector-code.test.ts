import fc from 'fast-check';
import { connectorCodeSizeProblem, connectorSourcesSizeProblem, MAX_CONNECTOR_CODE_BYTES, MAX_CONNECTOR_SOURCES_BYTES, MAX_SOURCE_PATH_LENGTH, sourcePathProblem, withoutEmptySources } from './connector-code';
import type { ConnectorSource } from './connector-code';

describe('connector code and sources', () => {
  it('deploy code up to 1 MiB as UTF-8, and say by how much it is over', () => {
    expect(connectorCodeSizeProblem('x'.repeat(MAX_CONNECTOR_CODE_BYTES))).toBeNull();
    expect(connectorCodeSizeProblem('x'.repeat(MAX_CONNECTOR_CODE_BYTES + 1))).toBe(
      'the connector code is 1,048,577 bytes, over the limit of 1 MiB (1,048,576 bytes); for a bundle, import less of large packages or use smaller ones',
    );
    // Counted in bytes, not characters.
    expect(connectorCodeSizeProblem('é'.repeat(MAX_CONNECTOR_CODE_BYTES / 2 + 1))).toMatch(/^the connector code is 1,048,578 bytes/);
  });

  it('keep sources up to 1 MiB together', () => {
    const half = 'x'.repeat(MAX_CONNECTOR_SOURCES_BYTES / 2);
    expect(connectorSourcesSizeProblem([])).toBeNull();
    expect(connectorSourcesSizeProblem([{ path: 'a.ts', content: half }, { path: 'b.ts', content: half }])).toBeNull();
    expect(connectorSourcesSizeProblem([{ path: 'a.ts', content: half }, { path: 'b.ts', content: `${half}é` }])).toBe(
      'the source files are 1,048,578 bytes together, over the limit of 1 MiB (1,048,576 bytes)',
    );
  });

  it('keep source paths relative to the project, of 1 to 300 characters', () => {
    for (const path of ['src/index.ts', 'a', 'package.json', '.env.example', 'src/a..b.ts', 'x'.repeat(MAX_SOURCE_PATH_LENGTH)]) expect(sourcePathProblem(path)).toBeNull();
    expect(sourcePathProblem('')).toBe('must be 1 to 300 characters');
    expect(sourcePathProblem('x'.repeat(MAX_SOURCE_PATH_LENGTH + 1))).toBe('must be 1 to 300 characters');
    expect(sourcePathProblem('src\\index.ts')).toBe('must not hold backslashes (use /)');
    for (const path of ['/etc/passwd', 'C:/x.ts', 'c:x.ts']) expect(sourcePathProblem(path)).toBe('must be relative to the project root');
    for (const path of ['src//a.ts', 'src/', './a.ts', 'src/./a.ts', '../a.ts', 'src/..']) {
      expect(sourcePathProblem(path)).toBe('must be a file path under the project root, without . or .. parts, such as src/index.ts');
    }
    // A drive letter only at the start: `a:` further on is a file name.
    expect(sourcePathProblem('src/a:b.ts')).toBeNull();
  });

  it('refuse source paths that hide or reorder what a reader sees', () => {
    for (const hidden of ['\u0000', '\n', '\u007f', '\u200b', '\u202e', '\u2028', '\u2029', '\ufeff']) {
      expect(sourcePathProblem(`src/a${hidden}.ts`)).toBe('must not hold control, formatting or line-separator characters (such as U+202E or U+2028)');
    }
    expect(sourcePathProblem('src/café/naïve.ts')).toBeNull();
  });

  it('accept a path only if it names a file under the root once joined (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('src', 'a.ts', '.', '..', '', 'b'), { minLength: 1, maxLength: 5 }), (parts) => {
        const path = parts.join('/');
        if (sourcePathProblem(path) === null) expect(parts.every((part) => part !== '' && part !== '.' && part !== '..')).toBe(true);
      }),
    );
  });

  it('store no sources member for a plain script', () => {
    const script = { code: 'x', sources: [] };
    expect(withoutEmptySources(script)).toEqual({ code: 'x' });
    expect('sources' in withoutEmptySources(script)).toBe(false);
    const bundle = { code: 'x', sources: [{ path: 'a.ts', content: '' }] };
    expect(withoutEmptySources(bundle)).toBe(bundle);
    const plain: { code: string; sources?: ConnectorSource[] } = { code: 'x' };
    expect(withoutEmptySources(plain)).toBe(plain);
  });
});

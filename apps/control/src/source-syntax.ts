import type { Loader, TransformFailure } from 'esbuild';
import type { ConnectorSource } from '@gi/domain';

/** Where a source file as its author wrote it stops parsing: line and column from 1. */
export interface SourceSyntaxError {
  file: string;
  line: number;
  column: number;
  message: string;
}

/** The files a bundle is built from that are parsed, by how their name ends; others (data, text) are skipped. */
const LOADERS: Record<string, Loader> = {
  ts: 'ts',
  mts: 'ts',
  cts: 'ts',
  tsx: 'tsx',
  js: 'js',
  mjs: 'js',
  cjs: 'js',
  jsx: 'jsx',
  json: 'json',
};

/**
 * The first syntax error in the original sources of a bundle, in their order (the entry first), or
 * null when they all parse. Each file is parsed on its own as a module, as the bundler read it, so the
 * position is in the file the author wrote, not in the bundle.
 */
export async function firstSourceSyntaxError(sources: readonly ConnectorSource[]): Promise<SourceSyntaxError | null> {
  // Loaded here: only a refused bundle pays for it.
  const { transform } = await import('esbuild');
  for (const { path, content } of sources) {
    const loader = LOADERS[path.slice(path.lastIndexOf('.') + 1).toLowerCase()];
    if (!loader) continue;
    try {
      await transform(content, { loader, format: loader === 'json' ? undefined : 'esm', target: 'es2023', sourcefile: path, logLevel: 'silent' });
    } catch (error) {
      const first = (error as Partial<TransformFailure>).errors?.[0];
      if (!first?.location) throw error;
      return { file: path, line: first.location.line, column: first.location.column + 1, message: first.text };
    }
  }
  return null;
}

/**
 * What a deployed connector version holds: the code the sandbox runs (a plain script, or the bundle
 * the CLI built from a project) and, for a bundle, the files its author wrote. The limits live here
 * so the control API and the CLI, which checks before it sends, refuse with the same figures.
 */

/** One file of a connector project as its author wrote it (packages from node_modules are not kept). */
export interface ConnectorSource {
  /** Relative to the project's root, with `/` separators (`src/index.ts`). */
  path: string;
  content: string;
}

/** The code the sandbox runs, as UTF-8. */
export const MAX_CONNECTOR_CODE_BYTES = 1024 * 1024;
/** The author's files kept with one version. */
export const MAX_CONNECTOR_SOURCES = 100;
/** Their contents together, as UTF-8. */
export const MAX_CONNECTOR_SOURCES_BYTES = 1024 * 1024;
export const MAX_SOURCE_PATH_LENGTH = 300;

const bytesText = (bytes: number) => `${bytes.toLocaleString('en-US')} bytes`;
const limitText = (bytes: number) => `${bytes / (1024 * 1024)} MiB (${bytesText(bytes)})`;

/** Why the code is too large to deploy, or null. */
export function connectorCodeSizeProblem(code: string): string | null {
  const bytes = Buffer.byteLength(code);
  if (bytes <= MAX_CONNECTOR_CODE_BYTES) return null;
  return `the connector code is ${bytesText(bytes)}, over the limit of ${limitText(MAX_CONNECTOR_CODE_BYTES)}; for a bundle, import less of large packages or use smaller ones`;
}

/** Why the author's files are too large to keep with a version, or null. */
export function connectorSourcesSizeProblem(sources: readonly ConnectorSource[]): string | null {
  const bytes = sources.reduce((sum, source) => sum + Buffer.byteLength(source.content), 0);
  if (bytes <= MAX_CONNECTOR_SOURCES_BYTES) return null;
  return `the source files are ${bytesText(bytes)} together, over the limit of ${limitText(MAX_CONNECTOR_SOURCES_BYTES)}`;
}

/**
 * Why a source path is not one the version can keep, or null: relative to the project root, `/`
 * separators, no `.`, `..` or empty parts, and nothing that hides or reorders what a reader sees
 * (control characters, bidirectional overrides such as U+202E, line separators such as U+2028).
 */
export function sourcePathProblem(path: string): string | null {
  if (path.length === 0 || path.length > MAX_SOURCE_PATH_LENGTH) return `must be 1 to ${MAX_SOURCE_PATH_LENGTH} characters`;
  if (INVISIBLE.test(path)) return 'must not hold control, formatting or line-separator characters (such as U+202E or U+2028)';
  if (path.includes('\\')) return 'must not hold backslashes (use /)';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'must be relative to the project root';
  if (path.split('/').some((part) => part === '' || part === '.' || part === '..')) return 'must be a file path under the project root, without . or .. parts, such as src/index.ts';
  return null;
}

/** Control (Cc), format (Cf: bidirectional controls, zero-width characters) and line or paragraph separators (Zl, Zp). */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** The settings as stored: no `sources` member when there are none (a plain script). */
export function withoutEmptySources<T extends { sources?: ConnectorSource[] }>(settings: T): T {
  if (settings.sources === undefined || settings.sources.length > 0) return settings;
  const { sources: _none, ...rest } = settings;
  return rest as T;
}

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

/** Why a source path is not one the version can keep, or null: relative, `/` separators, no `.` or `..` parts past a leading run of `..`. */
export function sourcePathProblem(path: string): string | null {
  if (path.length === 0 || path.length > MAX_SOURCE_PATH_LENGTH) return `must be 1 to ${MAX_SOURCE_PATH_LENGTH} characters`;
  if (/[\u0000-\u001f\\]/.test(path)) return 'must not hold control characters or backslashes (use /)';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'must be relative to the project root';
  const parts = path.split('/');
  const firstOther = parts.findIndex((part) => part !== '..');
  if (firstOther === -1 || parts.slice(firstOther).some((part) => part === '' || part === '.' || part === '..')) return 'must be a relative file path such as src/index.ts';
  return null;
}

/** The settings as stored: no `sources` member when there are none (a plain script). */
export function withoutEmptySources<T extends { sources?: ConnectorSource[] }>(settings: T): T {
  if (settings.sources === undefined || settings.sources.length > 0) return settings;
  const { sources: _none, ...rest } = settings;
  return rest as T;
}

import { extname } from 'node:path';
import { UsageError } from '../cli-errors';
import { readLocalFile } from '../read-local-file';


/** What `gi invoke` sends: parsed from --body/--body-file, --content-type, --query and --header. */
export interface InvokeRequest {
  body?: Buffer;
  contentType?: string;
  query: Array<[string, string]>;
  headers: Array<[string, string]>;
}

export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BY_EXTENSION: Record<string, string> = {
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.html': 'text/html',
};

const usageOf = (helpCommand: string) => (message: string) => new UsageError(message, helpCommand);

/** "k=v" items in order; repeats kept. A bare "k" means an empty value. */
export function parseQueryItems(items: string[], helpCommand = 'gi invoke --help'): Array<[string, string]> {
  const usage = usageOf(helpCommand);
  return items.map((item) => {
    const eq = item.indexOf('=');
    const key = eq < 0 ? item : item.slice(0, eq);
    if (key === '') throw usage(`--query "${item}" must look like name=value`);
    return [key, eq < 0 ? '' : item.slice(eq + 1)];
  });
}

/** "Name: value" items. Authorization and Content-Type have their own options. */
export function parseHeaderItems(items: string[], helpCommand = 'gi invoke --help'): Array<[string, string]> {
  const usage = usageOf(helpCommand);
  return items.map((item) => {
    const colon = item.indexOf(':');
    const name = colon < 0 ? '' : item.slice(0, colon).trim();
    if (!HEADER_NAME.test(name)) throw usage(`--header "${item}" must look like 'Name: value'`);
    const lower = name.toLowerCase();
    if (lower === 'authorization') throw usage('--header Authorization is not allowed: pass the bot token with --token');
    if (lower === 'content-type') throw usage('--header Content-Type is not allowed: use --content-type');
    return [name, item.slice(colon + 1).trim()];
  });
}

const isJsonType = (type: string) => /^application\/([\w.+-]+\+)?json\b/i.test(type.trim());

export interface BodyOptions {
  body?: string;
  bodyFile?: string;
  contentType?: string;
}

/** Where a command reads a body from besides files, and the help its usage errors point to. */
export interface BodySource {
  readStdin?: () => Promise<Buffer>;
  helpCommand?: string;
}

/**
 * The body of --body, or of --body-file (a file, or standard input for `-`). Text from --body or stdin
 * is JSON unless --content-type says otherwise; a file's type is guessed from its extension.
 */
export async function readBody(options: BodyOptions, source: BodySource = {}): Promise<Pick<InvokeRequest, 'body' | 'contentType'>> {
  const usage = usageOf(source.helpCommand ?? 'gi invoke --help');
  if (options.body !== undefined && options.bodyFile !== undefined) throw usage('pass either --body or --body-file, not both');
  if (options.body !== undefined) {
    const contentType = options.contentType ?? 'application/json';
    if (isJsonType(contentType)) {
      try {
        JSON.parse(options.body);
      } catch (error) {
        throw usage(`--body is not valid JSON (${(error as Error).message}); pass --content-type text/plain to send text`);
      }
    }
    return { body: Buffer.from(options.body, 'utf8'), contentType };
  }
  if (options.bodyFile === '-') {
    if (!source.readStdin) throw usage('--body-file - (standard input) is not available for this command');
    return { body: await source.readStdin(), contentType: options.contentType ?? 'application/json' };
  }
  if (options.bodyFile !== undefined) {
    const body = await readLocalFile(options.bodyFile, '--body-file');
    const contentType = options.contentType ?? BY_EXTENSION[extname(options.bodyFile).toLowerCase()] ?? 'text/plain';
    return { body, contentType };
  }
  return options.contentType !== undefined ? { contentType: options.contentType } : {};
}

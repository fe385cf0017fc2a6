import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { CliError, UsageError } from '../cli-errors';

const usage = (message: string) => new UsageError(message, 'gi invoke --help');

/** What `gi invoke` sends: parsed from --body/--body-file, --content-type, --query and --header. */
export interface InvokeRequest {
  body?: Buffer;
  contentType?: string;
  query: Array<[string, string]>;
  headers: Array<[string, string]>;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BY_EXTENSION: Record<string, string> = {
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.html': 'text/html',
};

/** "k=v" items in order; repeats kept. A bare "k" means an empty value. */
export function parseQueryItems(items: string[]): Array<[string, string]> {
  return items.map((item) => {
    const eq = item.indexOf('=');
    const key = eq < 0 ? item : item.slice(0, eq);
    if (key === '') throw usage(`--query "${item}" must look like name=value`);
    return [key, eq < 0 ? '' : item.slice(eq + 1)];
  });
}

/** "Name: value" items. Authorization and Content-Type have their own options. */
export function parseHeaderItems(items: string[]): Array<[string, string]> {
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

export async function readBody(options: BodyOptions): Promise<Pick<InvokeRequest, 'body' | 'contentType'>> {
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
  if (options.bodyFile !== undefined) {
    let body: Buffer;
    try {
      body = await readFile(options.bodyFile);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new CliError(`cannot read ${options.bodyFile}: ${code === 'ENOENT' ? 'no such file' : (code ?? String(error))}`);
    }
    const contentType = options.contentType ?? BY_EXTENSION[extname(options.bodyFile).toLowerCase()] ?? 'text/plain';
    return { body, contentType };
  }
  return options.contentType !== undefined ? { contentType: options.contentType } : {};
}

import { readFile } from 'node:fs/promises';
import { CliError } from './cli-errors';

const REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

/**
 * A file the user named on the command line. One that cannot be read is a CliError saying which and
 * why, led by the option that named it (`--body-file: cannot read x.json: no such file`).
 */
export async function readLocalFile(file: string, option?: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = (code && REASONS[code]) ?? code ?? String(error);
    throw new CliError(`${option ? `${option}: ` : ''}cannot read ${file}: ${reason}`);
  }
}

import { readFile } from 'node:fs/promises';
import type { CliConfig } from '@gi/config';
import { CliError } from './cli-errors';

/**
 * The admin token, looked up only when a command needs it: --admin-token, then GI_ADMIN_TOKEN, then
 * the file embedded mode writes on first start (<DATA_DIR>/admin-token). Its value is never printed.
 */
export class AdminTokenSource {
  private value: string | null | undefined;

  constructor(private readonly config: Pick<CliConfig, 'adminToken' | 'adminTokenFile'>) {}

  /** The token, or null when none is configured. */
  async find(): Promise<string | null> {
    if (this.value === undefined) this.value = this.config.adminToken ?? (await this.readFile());
    return this.value;
  }

  async get(): Promise<string> {
    const token = await this.find();
    if (token === null) {
      throw new CliError(
        `no admin token: pass --admin-token, set GI_ADMIN_TOKEN, or set DATA_DIR to the service's data directory (looked for ${this.config.adminTokenFile})`,
      );
    }
    return token;
  }

  /** Where a refused token came from, for the error message. */
  describeSource(): string {
    return this.config.adminToken !== null ? '--admin-token / GI_ADMIN_TOKEN' : this.config.adminTokenFile;
  }

  private async readFile(): Promise<string | null> {
    try {
      const text = (await readFile(this.config.adminTokenFile, 'utf8')).trim();
      return text === '' ? null : text;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw new CliError(`cannot read the admin token file ${this.config.adminTokenFile}: ${code ?? String(error)}`);
    }
  }
}

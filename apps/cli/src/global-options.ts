import { DEFAULT_CLI_URL } from '@gi/config';
import type { OptionSpecs } from './command';

/** Accepted before or after the command. */
export const GLOBAL_OPTIONS: OptionSpecs = {
  url: { type: 'string', value: 'URL', description: `Service base URL (env GI_URL, default ${DEFAULT_CLI_URL})` },
  'admin-token': { type: 'string', value: 'TOKEN', description: 'Admin token (env GI_ADMIN_TOKEN, else the file <DATA_DIR>/admin-token, DATA_DIR default ./data)' },
  json: { type: 'boolean', description: 'Machine-readable JSON output on stdout' },
  help: { type: 'boolean', short: 'h', description: 'Show help' },
};

export interface GlobalValues {
  url?: string;
  adminToken?: string;
  json: boolean;
  help: boolean;
}

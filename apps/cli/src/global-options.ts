import { DEFAULT_CLI_URL } from '@gi/config';
import type { OptionSpecs } from './command';

/** Accepted before or after the command. */
export const GLOBAL_OPTIONS: OptionSpecs = {
  url: { type: 'string', value: 'URL', description: `Service base URL (env GI_URL, default ${DEFAULT_CLI_URL})` },
  'admin-token': { type: 'string', value: 'TOKEN', description: 'Admin token (env GI_ADMIN_TOKEN, else the file <DATA_DIR>/admin-token, DATA_DIR default ./data)' },
  json: { type: 'boolean', description: 'One JSON document on stdout: the result, or a problem document (RFC 9457) when the command fails' },
  help: { type: 'boolean', short: 'h', description: 'Show help' },
  version: { type: 'boolean', description: 'Show the release, Node.js version and platform (as gi version)' },
};

export interface GlobalValues {
  url?: string;
  adminToken?: string;
  json: boolean;
  help: boolean;
  version: boolean;
}

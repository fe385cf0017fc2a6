import { resolve } from 'node:path';
import { addressList } from './address-list';
import { ConfigError } from './service-config';

/** The environment variables the `gi` command reads. Only these leave process.env. */
export interface CliEnv {
  GI_URL?: string;
  GI_ADMIN_TOKEN?: string;
  DATA_DIR?: string;
  /** Read as the service reads it: `gi connector run` lets connectors reach these addresses too. */
  CONNECTOR_TRUSTED_ADDRESSES?: string;
  /** Every variable, read only by name for `gi connector run --secret-env NAME`. */
  variables?: Readonly<Record<string, string | undefined>>;
}

/** Command-line values that win over the environment. */
export interface CliOverrides {
  url?: string;
  adminToken?: string;
}

export interface CliConfig {
  /** Base URL of the service, without a trailing slash. */
  url: string;
  /** From --admin-token or GI_ADMIN_TOKEN; null means "read adminTokenFile when needed". */
  adminToken: string | null;
  dataDir: string;
  /** Where embedded mode keeps the admin token it created on first start. */
  adminTokenFile: string;
  /** Private or loopback addresses `gi connector run` lets connectors reach, as the service does. */
  connectorTrustedAddresses: string[];
}

export const DEFAULT_CLI_URL = 'http://127.0.0.1:8080';

export function readCliEnv(): CliEnv {
  const { GI_URL, GI_ADMIN_TOKEN, DATA_DIR, CONNECTOR_TRUSTED_ADDRESSES } = process.env;
  return { GI_URL, GI_ADMIN_TOKEN, DATA_DIR, CONNECTOR_TRUSTED_ADDRESSES, variables: process.env };
}

/** Resolves the CLI settings; throws ConfigError listing every problem. Empty values count as unset. */
export function parseCliConfig(env: CliEnv, overrides: CliOverrides = {}): CliConfig {
  const problems: string[] = [];
  const set = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());

  const urlSource = set(overrides.url) !== undefined ? '--url' : 'GI_URL';
  const rawUrl = set(overrides.url) ?? set(env.GI_URL) ?? DEFAULT_CLI_URL;
  const url = normalizeUrl(rawUrl);
  if (url === null) problems.push(`${urlSource}: "${rawUrl}" is not an http(s) URL such as ${DEFAULT_CLI_URL}`);

  if (overrides.adminToken !== undefined && set(overrides.adminToken) === undefined) {
    problems.push('--admin-token: must not be empty');
  }
  const trusted = set(env.CONNECTOR_TRUSTED_ADDRESSES) === undefined ? { success: true as const, data: [] } : addressList.safeParse(env.CONNECTOR_TRUSTED_ADDRESSES);
  if (!trusted.success) problems.push(`CONNECTOR_TRUSTED_ADDRESSES: ${trusted.error.issues[0].message}`);
  if (problems.length > 0) throw new ConfigError(problems);

  const dataDir = set(env.DATA_DIR) ?? './data';
  return {
    url: url as string,
    adminToken: set(overrides.adminToken) ?? set(env.GI_ADMIN_TOKEN) ?? null,
    dataDir,
    adminTokenFile: resolve(dataDir, 'admin-token'),
    connectorTrustedAddresses: trusted.success ? trusted.data : [],
  };
}

function normalizeUrl(text: string): string | null {
  try {
    const url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    if (url.search || url.hash) return null;
    return url.href.replace(/\/+$/, '');
  } catch {
    return null;
  }
}

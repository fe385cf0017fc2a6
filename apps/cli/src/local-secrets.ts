import { assertSecretName, assertSecretValue, GiError, mergeRunSecrets } from '@gi/domain';
import type { RunSecrets } from '@gi/domain';
import { CliError } from './cli-errors';

/**
 * The secrets of a local run (`gi connector run --secrets-file F --secret-env NAME`), held to the
 * service's rules for names and values. A file is a JSON object of strings, or dotenv lines:
 * `NAME=value`, blank lines and `#` comments skipped, a value in matching single or double quotes
 * taken as written between them.
 */
export function parseSecretsFile(text: string, file: string): Array<[string, string]> {
  const where = (line?: number) => `--secrets-file ${file}${line === undefined ? '' : `:${line}`}`;
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (error) {
      throw new CliError(`${where()}: not valid JSON (${(error as Error).message})`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new CliError(`${where()}: expected a JSON object of NAME: "value"`);
    return Object.entries(parsed).map(([name, value]) => {
      if (typeof value !== 'string') throw new CliError(`${where()}: the value of ${name} is not a string`);
      return checked(name, value, where());
    });
  }
  const entries: Array<[string, string]> = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const at = line.indexOf('=');
    if (at <= 0) throw new CliError(`${where(index + 1)}: expected NAME=value`);
    const name = line.slice(0, at).trim();
    let value = line.slice(at + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0])) value = value.slice(1, -1);
    entries.push(checked(name, value, where(index + 1)));
  });
  return entries;
}

/** `--secret-env NAME`: the variable's value, which must be set. */
export function secretFromEnvironment(name: string, environment: Readonly<Record<string, string | undefined>>): [string, string] {
  const value = environment[name];
  if (value === undefined || value === '') throw new CliError(`--secret-env ${name}: the environment variable ${name} is not set`);
  return checked(name, value, `--secret-env ${name}`);
}

/** The run's secrets: the file's, then the environment's over them. */
export const localSecrets = (fromFile: Array<[string, string]>, fromEnvironment: Array<[string, string]>): RunSecrets => mergeRunSecrets(fromFile, fromEnvironment);

function checked(name: string, value: string, where: string): [string, string] {
  try {
    return [assertSecretName(name), assertSecretValue(value)];
  } catch (error) {
    if (error instanceof GiError) throw new CliError(`${where}: ${error.detail}`);
    throw error;
  }
}

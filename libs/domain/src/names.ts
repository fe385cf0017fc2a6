import { badRequest } from './errors';

/** Bot ids, entity names and integration ids appear in URLs and storage keys: keep them plain. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export type NameKind = 'botId' | 'entityName' | 'integrationId' | 'tokenId' | 'pool';

export function isValidName(value: string): boolean {
  return NAME.test(value);
}

export function assertName(kind: NameKind, value: string): string {
  if (!isValidName(value)) {
    throw badRequest(`${kind} must be 1-128 characters of letters, digits, '_', '.', '-' and start with a letter or digit.`);
  }
  return value;
}

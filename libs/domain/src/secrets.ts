import { badRequest, GiError } from './errors';

/**
 * Connector secrets: API credentials an integration author sets through the control API, kept
 * encrypted, read by the connector as `Context.Secrets.NAME`, never shown again. A secret belongs to
 * a bot (shared by its integrations) or to one integration; at a run, the integration's secret of a
 * name wins over the bot's.
 */

/** The longest secret name. */
export const MAX_SECRET_NAME_LENGTH = 64;
/** Upper case, digits and '_', not starting with a digit: they read as constants, and as environment variable names. */
export const SECRET_NAME = new RegExp(`^[A-Z_][A-Z0-9_]{0,${MAX_SECRET_NAME_LENGTH - 1}}$`);
/** The largest value, in UTF-8 bytes. */
export const MAX_SECRET_VALUE_BYTES = 8 * 1024;
/** Secrets a bot, or one integration, may hold. */
export const MAX_SECRETS_PER_SCOPE = 100;
/** Values shorter than this are not redacted from log lines: 'a' or 'yes' would cut every line to pieces. */
export const MIN_REDACTED_SECRET_LENGTH = 4;
export const REDACTED_SECRET = '[secret]';

/** AES-256: SECRETS_KEY (and SECRETS_KEY_PREVIOUS) are this many random bytes, in base64. */
export const SECRET_KEY_BYTES = 32;

/** A SECRETS_KEY setting as a key: base64 (or base64url) of exactly 32 bytes; throws saying what it must be. */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = Buffer.from(trimmed, 'base64');
  if (key.length !== SECRET_KEY_BYTES || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) {
    throw new Error(`a secrets key is ${SECRET_KEY_BYTES} random bytes in base64 (e.g. \`openssl rand -base64 32\`)`);
  }
  return key;
}

/** Where a secret lives: a bot's (`integrationId` null) or one of its integrations'. */
export interface SecretScope {
  botId: string;
  integrationId: string | null;
}

export interface SecretRef extends SecretScope {
  name: string;
}

/** A secret as it is stored: its value sealed (encrypted with the key it names), never in clear. */
export interface StoredSecret extends SecretRef {
  sealed: string;
  createdAt: number;
  updatedAt: number;
}

/** The secrets a run reads, by name. */
export type RunSecrets = Readonly<Record<string, string>>;

export function assertSecretName(name: string): string {
  if (!SECRET_NAME.test(name)) {
    throw badRequest(`A secret name must be 1-${MAX_SECRET_NAME_LENGTH} characters of upper-case letters, digits and '_', not starting with a digit (like API_KEY); got '${name.slice(0, 80)}'.`);
  }
  return name;
}

export function assertSecretValue(value: string): string {
  if (value.length === 0) throw badRequest('A secret value must not be empty.');
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_SECRET_VALUE_BYTES) throw badRequest(`A secret value may be at most ${MAX_SECRET_VALUE_BYTES} bytes (8 KiB); this one has ${bytes}.`);
  return value;
}

export const tooManySecrets = (scope: SecretScope) =>
  badRequest(`${describeScope(scope)} holds ${MAX_SECRETS_PER_SCOPE} secrets, the most one may hold; delete one first.`);

export const describeScope = ({ botId, integrationId }: SecretScope) =>
  integrationId === null ? `Bot '${botId}'` : `Integration '${integrationId}' of bot '${botId}'`;

/** Secret writes without a key: refused, never stored in clear. */
export const secretsNotConfigured = () =>
  new GiError(
    'secrets_not_configured',
    'Secrets not configured',
    'No SECRETS_KEY is configured, so secrets cannot be stored: set SECRETS_KEY (32 random bytes, base64; e.g. `openssl rand -base64 32`) and restart.',
  );

/** The secrets of a run: the bot's, then the integration's over them. */
export function mergeRunSecrets(botSecrets: ReadonlyArray<readonly [string, string]>, integrationSecrets: ReadonlyArray<readonly [string, string]>): RunSecrets {
  return Object.freeze(Object.fromEntries([...botSecrets, ...integrationSecrets]));
}

/**
 * The one rule for keeping secret values out of what a run hands back (log lines, error titles and
 * messages, progress messages, the host's own lines): every value of at least
 * MIN_REDACTED_SECRET_LENGTH characters becomes `[secret]`, the longest first, so a value that contains
 * another is replaced whole. Text that is cut to a size is redacted first and cut after, and a cut
 * end that begins a secret is dropped: no part of a value longer than MIN_REDACTED_SECRET_LENGTH - 1
 * characters leaves a run, wherever a cut falls.
 */
export class SecretFilter {
  private readonly values: readonly string[];
  /** False for a run with no value long enough to redact (most runs): its text is left as it is. */
  readonly redacts: boolean;
  /**
   * How many characters past a cut to read so that a value straddling the cut is read whole and
   * redacted (the longest value, less one). Read `window(max)` characters of a text to cut to `max`.
   */
  private readonly reach: number;

  constructor(secrets: RunSecrets | undefined) {
    this.values = [...new Set(Object.values(secrets ?? {}))].filter((v) => v.length >= MIN_REDACTED_SECRET_LENGTH).sort((a, b) => b.length - a.length);
    this.redacts = this.values.length > 0;
    this.reach = this.redacts ? this.values[0].length - 1 : 0;
  }

  redact(text: string): string {
    let out = text;
    for (const value of this.values) if (out.includes(value)) out = out.split(value).join(REDACTED_SECRET);
    return out;
  }

  /** How many characters of a text to read for `cut(text, max)`: one more than `max` (so a cut shows), and the reach. */
  window(max: number): number {
    return max + 1 + this.reach;
  }

  /**
   * `text` (the whole text, or its first `window(max)` characters) redacted, then cut to `max`
   * characters, `mark` (an ellipsis) ending a cut text within them.
   */
  cut(text: string, max: number, mark = ''): string {
    const readWhole = text.length < this.window(max);
    const redacted = this.redact(text);
    if (readWhole && redacted.length <= max) return redacted;
    return this.dropSecretStart(redacted.slice(0, max - mark.length)) + mark;
  }

  /** `text`, a cut end that begins a secret value dropped (the longest such end). */
  dropSecretStart(text: string): string {
    let drop = 0;
    for (const value of this.values) {
      // The earliest start of a suffix of `text` that begins `value` gives the longest such suffix.
      for (let at = text.indexOf(value[0], Math.max(0, text.length - value.length + 1)); at !== -1 && text.length - at > drop; at = text.indexOf(value[0], at + 1)) {
        if (value.startsWith(text.slice(at))) {
          drop = text.length - at;
          break;
        }
      }
    }
    return drop === 0 ? text : text.slice(0, text.length - drop);
  }
}

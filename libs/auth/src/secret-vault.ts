import { MAX_SECRETS_PER_SCOPE, mergeRunSecrets, secretsNotConfigured, tooManySecrets } from '@gi/domain';
import type { RunSecrets, SecretRef, SecretScope, SecretStore, StoredSecret } from '@gi/domain';
import { SecretCipher, SecretUnreadable } from './secret-cipher';
import type { CatalogStore } from '@gi/domain';

/** A secret as the API shows it: its name and dates, never its value. */
export interface SecretListing {
  name: string;
  createdAt: number;
  updatedAt: number;
}

/**
 * What a callback signing secret is sealed as: a reference no connector secret can have (its name is
 * not a valid secret name), so neither can be moved in place of the other.
 */
const signingSecretRef = (botId: string) => ({ botId, integrationId: null, name: '$callback-signing-secret' });

/**
 * What a re-encryption did, connector secrets and callback signing secrets together: values sealed
 * (again) under the current key, those already under it, and those no configured key opens.
 */
export interface ResealReport {
  resealed: number;
  current: number;
  unreadable: number;
}

const RESEAL_PAGE = 200;

/**
 * How long the secrets read for a run serve the next runs of its integration: most bots have none, and
 * the store query they would cost each run is a noticeable part of a trivial run. A change made
 * elsewhere (the control service) reaches runs within this time; one made here, at once.
 */
export const RUN_SECRETS_REUSE_MS = 1000;
/** Integrations whose secrets are kept for reuse at once; past it, the list starts again. */
const RECENT_LIMIT = 10_000;
/** The secrets of every run of an integration that has none: one frozen object, not one per run. */
const NO_SECRETS: RunSecrets = Object.freeze({});

/**
 * Connector secrets in clear at the edges only: values are sealed before they reach the store and
 * opened only for a run. Without a cipher (no SECRETS_KEY) writes are refused and a run that has
 * secrets cannot read them; one without secrets is unaffected.
 */
export class SecretVault {
  /** The sealed secrets read for recent runs, by bot and integration, and until when they serve. */
  private readonly recent = new Map<string, { until: number; stored: StoredSecret[] }>();

  constructor(
    private readonly store: SecretStore,
    private readonly cipher: SecretCipher | null,
    /** The callback signing secrets, sealed with the same key; absent where they are not handled. */
    private readonly signing?: Pick<CatalogStore, 'listSigningSecrets' | 'resealSigningSecret'>,
  ) {}

  /** The stored form of a new callback signing secret: sealed when a key is configured, else in clear (docs/decisions.md). */
  sealSigningSecret(botId: string, secret: string): string {
    return this.cipher ? this.cipher.seal(signingSecretRef(botId), secret) : secret;
  }

  /** A callback signing secret in clear, from its stored form; SecretUnreadable when sealed under no key configured here. */
  openSigningSecret(botId: string, stored: string): string {
    if (!SecretCipher.isSealed(stored)) return stored;
    if (!this.cipher) throw new SecretUnreadable('The callback signing secret is encrypted, but no SECRETS_KEY is configured to decrypt it.');
    return this.cipher.open(signingSecretRef(botId), stored);
  }

  /** Whether values can be sealed (SECRETS_KEY is configured). */
  get configured(): boolean {
    return this.cipher !== null;
  }

  /** Sets (or rotates) a secret; 409 without a key, 400 when its scope is full. Name and value are checked by the caller. */
  async set(ref: SecretRef, value: string, now: number): Promise<'created' | 'updated'> {
    if (!this.cipher) throw secretsNotConfigured();
    this.recent.clear();
    const put = await this.store.put(ref, this.cipher.seal(ref, value), now, MAX_SECRETS_PER_SCOPE);
    if (put === 'full') throw tooManySecrets(ref);
    return put;
  }

  async list(scope: SecretScope): Promise<SecretListing[]> {
    return (await this.store.list(scope)).map(({ name, createdAt, updatedAt }) => ({ name, createdAt, updatedAt }));
  }

  delete(ref: SecretRef): Promise<boolean> {
    this.recent.clear();
    return this.store.delete(ref);
  }

  /** The run's secrets in clear: the bot's, the integration's over them. Throws SecretUnreadable (or when no key is configured) with a message that names no value. */
  async forRun(botId: string, integrationId: string): Promise<RunSecrets> {
    const stored = await this.storedForRun(botId, integrationId);
    if (stored.length === 0) return NO_SECRETS;
    if (!this.cipher) throw new SecretUnreadable(`The integration has ${stored.length} secret(s), but no SECRETS_KEY is configured to decrypt them.`);
    const cipher = this.cipher;
    const open = (scope: 'bot' | 'integration') =>
      stored.filter((s) => (s.integrationId === null) === (scope === 'bot')).map((s) => [s.name, cipher.open(s, s.sealed)] as const);
    return mergeRunSecrets(open('bot'), open('integration'));
  }

  /**
   * The values of the named secrets in clear, in the order named, those not set left out: what an
   * integration's inbound auth checks calls against (docs/inbound.md). The integration's secret of a name
   * wins over the bot's, as for a run; only the named ones are opened. Throws SecretUnreadable (or when no
   * key is configured) with a message that names no value.
   */
  async valuesOf(botId: string, integrationId: string, names: readonly string[]): Promise<string[]> {
    const stored = await this.storedForRun(botId, integrationId);
    const values: string[] = [];
    for (const name of names) {
      const secret = stored.find((s) => s.name === name && s.integrationId !== null) ?? stored.find((s) => s.name === name);
      if (!secret) continue;
      if (!this.cipher) throw new SecretUnreadable(`Secret ${name} is stored, but no SECRETS_KEY is configured to decrypt it.`);
      values.push(this.cipher.open(secret, secret.sealed));
    }
    return values;
  }

  /** The sealed secrets of a run, read again at most once per RUN_SECRETS_REUSE_MS for each integration. */
  private async storedForRun(botId: string, integrationId: string): Promise<StoredSecret[]> {
    const key = `${botId}\u0000${integrationId}`;
    const now = performance.now();
    const recent = this.recent.get(key);
    if (recent && recent.until > now) return recent.stored;
    const stored = await this.store.listForRun(botId, integrationId);
    if (this.recent.size >= RECENT_LIMIT) this.recent.clear();
    this.recent.set(key, { until: now + RUN_SECRETS_REUSE_MS, stored });
    return stored;
  }

  /**
   * Seals every value not under the current key again (after SECRETS_KEY changed, with the old key as
   * SECRETS_KEY_PREVIOUS). A value set meanwhile is left as it is: it is sealed under the current key.
   */
  async resealAll(now: number): Promise<ResealReport> {
    if (!this.cipher) throw secretsNotConfigured();
    this.recent.clear();
    const report: ResealReport = { resealed: 0, current: 0, unreadable: 0 };
    let after: SecretRef | null = null;
    for (;;) {
      const page = await this.store.page(after, RESEAL_PAGE);
      for (const secret of page) {
        if (this.cipher.isCurrent(secret.sealed)) {
          report.current++;
          continue;
        }
        let value: string;
        try {
          value = this.cipher.open(secret, secret.sealed);
        } catch {
          report.unreadable++;
          continue;
        }
        if (await this.store.reseal(secret, secret.sealed, this.cipher.seal(secret, value))) report.resealed++;
        else report.current++;
      }
      if (page.length < RESEAL_PAGE) return this.resealSigningSecrets(report, now);
      const last = page[page.length - 1];
      after = { botId: last.botId, integrationId: last.integrationId, name: last.name };
    }
  }

  /** Seals the callback signing secrets still valid: those in clear (stored before SECRETS_KEY was set) and those under the previous key. */
  private async resealSigningSecrets(report: ResealReport, now: number): Promise<ResealReport> {
    if (!this.signing || !this.cipher) return report;
    for (const { botId, secret: stored } of await this.signing.listSigningSecrets(now)) {
      if (SecretCipher.isSealed(stored) && this.cipher.isCurrent(stored)) {
        report.current++;
        continue;
      }
      let secret: string;
      try {
        secret = this.openSigningSecret(botId, stored);
      } catch {
        report.unreadable++;
        continue;
      }
      if (await this.signing.resealSigningSecret(botId, stored, this.sealSigningSecret(botId, secret))) report.resealed++;
      else report.current++;
    }
    return report;
  }
}

import { loadOrCreateSecret } from '@gi/config';

/** Reads, or creates and says so on stderr, a secret file of the data directory (once per deployment). */
export function announceGenerated(dataDir: string, file: string, what: string): string {
  const secret = loadOrCreateSecret(dataDir, file);
  process.stderr.write(`${secret.created ? 'Generated the' : 'Using the'} ${what} stored in ${secret.path}\n`);
  return secret.value;
}

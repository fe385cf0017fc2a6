import { INBOUND_SCHEMES } from '@gi/domain';
import type { OptionSpecs } from '../command';
import type { CommandInput } from '../command-input';

/** The options of the scheme itself (`--inbound-option NAME=VALUE`), as the control API names them; numbers are sent as numbers. */
const SCHEME_OPTIONS = ['header', 'algorithm', 'encoding', 'prefix', 'timestampHeader', 'toleranceSeconds', 'deliveryIdHeader'] as const;
const NUMERIC = new Set(['toleranceSeconds']);

/** The options of `connector deploy` that set the integration's inbound auth (docs/inbound.md). */
export const inboundOptions: OptionSpecs = {
  'inbound-auth': { type: 'string', value: 'SCHEME', description: `How its calls prove who sent them: ${INBOUND_SCHEMES.join(', ')} (default bearer, a token of the bot)` },
  'inbound-secret': { type: 'string', value: 'NAME', description: "The connector secret holding the scheme's key (gi secrets set)" },
  'inbound-previous-secret': { type: 'string', value: 'NAME', description: 'During a key rotation: a second secret whose key is accepted too' },
  'inbound-allow-bearer': { type: 'boolean', description: 'Accept a token of the bot too, from callers that send no credential of the scheme' },
  'inbound-option': {
    type: 'string',
    multiple: true,
    value: 'NAME=VALUE',
    description: `An option of the scheme (${SCHEME_OPTIONS.join(', ')}); repeat for several`,
  },
};

/** The inbound auth given on the command line, to be checked by the service; undefined when none was. */
export function readInboundAuth(input: CommandInput): Record<string, unknown> | undefined {
  const scheme = input.string('inbound-auth');
  const secret = input.string('inbound-secret');
  const previous = input.string('inbound-previous-secret');
  const options = input.list('inbound-option');
  if (scheme === undefined) {
    if (secret !== undefined || previous !== undefined || options.length > 0 || input.flag('inbound-allow-bearer')) throw input.usage('--inbound-secret and the other --inbound-* options need --inbound-auth SCHEME');
    return undefined;
  }
  if (!(INBOUND_SCHEMES as readonly string[]).includes(scheme)) throw input.usage(`--inbound-auth must be one of ${INBOUND_SCHEMES.join(', ')}, got "${scheme}"`);
  const auth: Record<string, unknown> = { scheme };
  if (secret !== undefined) auth.secret = secret;
  if (previous !== undefined) auth.previousSecret = previous;
  if (input.flag('inbound-allow-bearer')) auth.allowBearer = true;
  for (const option of options) {
    const eq = option.indexOf('=');
    const name = option.slice(0, eq);
    if (eq === -1 || !(SCHEME_OPTIONS as readonly string[]).includes(name)) throw input.usage(`--inbound-option must be NAME=VALUE with NAME one of ${SCHEME_OPTIONS.join(', ')}, got "${option}"`);
    const value = option.slice(eq + 1);
    auth[name] = NUMERIC.has(name) && /^\d+$/.test(value) ? Number(value) : value;
  }
  return auth;
}

/** An inbound auth as one line: "github (key in GITHUB_WEBHOOK_SECRET)", "bearer". */
export function describeInboundAuth(auth: { scheme?: unknown; secret?: unknown; previousSecret?: unknown; allowBearer?: unknown } | undefined): string {
  if (!auth || auth.scheme === undefined || auth.scheme === 'bearer') return 'bearer (a token of the bot)';
  const previous = typeof auth.previousSecret === 'string' ? ` or ${auth.previousSecret}` : '';
  return `${String(auth.scheme)} (key in ${String(auth.secret)}${previous})${auth.allowBearer === true ? ', or a token of the bot' : ''}`;
}

import * as domain from '@gi/domain';
import { MINTED_TOKEN_TTL_SECONDS } from './invoke/bot-token';
import { commandHelp, generalHelp } from './help';
import { ALL_COMMANDS } from './run-cli';

/** Every number libs/domain exports (constants and the members of its tables), in the units help shows them in. */
function domainNumbers(): Set<number> {
  const found = new Set<number>();
  const visit = (value: unknown, depth: number) => {
    if (typeof value === 'number') {
      for (const shown of [value, value / 1024, value / 1000, value / 60, value / 3600]) found.add(shown);
    } else if (typeof value === 'object' && value !== null && depth < 3) {
      for (const member of Object.values(value)) visit(member, depth + 1);
    }
  };
  for (const [name, value] of Object.entries(domain)) if (/^[A-Z][A-Z0-9_]+$/.test(name)) visit(value, 0);
  return found;
}

/** The numbers a help text states as a bound: "default N", "N-M" ranges, and "N <unit>". */
function statedBounds(text: string): number[] {
  const numbers: number[] = [];
  const patterns = [/\bdefault (\d+)\b/g, /\b(\d+)-(\d+)\b/g, /\b(\d+) ?(?:KiB|MiB|bytes|seconds|minutes|s|ms)\b/g, /\bat most (\d+)\b/g];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) numbers.push(...match.slice(1).filter(Boolean).map(Number));
  return numbers;
}

describe('help texts state the limits of the service', () => {
  const allowed = domainNumbers();
  // The one bound of the CLI's own: the lifetime of the token `gi invoke` mints.
  allowed.add(MINTED_TOKEN_TTL_SECONDS / 60);
  const texts = [['gi help', generalHelp(ALL_COMMANDS)], ...ALL_COMMANDS.map((spec) => [`gi ${spec.path.join(' ')}`, commandHelp(spec)])];

  it.each(texts)('%s: every bound it states is a constant of libs/domain', (_name, text) => {
    const stray = statedBounds(text).filter((n) => !allowed.has(n));
    expect(stray).toEqual([]);
  });

  it('finds the bounds it checks', () => {
    expect(statedBounds('(default 60, 1-86400); up to 1024 KiB; at most 8 KiB')).toEqual([60, 1, 86400, 1024, 8, 8]);
    const deploy = commandHelp(ALL_COMMANDS.find((c) => c.path.join(' ') === 'connector deploy') as (typeof ALL_COMMANDS)[number]);
    expect(deploy).toContain(`--timeout SECONDS  `);
    expect(deploy).toContain(`(default ${domain.DEFAULT_TIMEOUT_SECONDS}, 1-${domain.MAX_TIMEOUT_SECONDS})`);
    expect(deploy).toContain(`--memory-mib MIB`);
    expect(deploy).toContain(`(default ${domain.DEFAULT_CONNECTOR_LIMITS.memoryMiB}, ${domain.CONNECTOR_LIMIT_BOUNDS.memoryMiB.min}-${domain.CONNECTOR_LIMIT_BOUNDS.memoryMiB.max})`);
  });
});

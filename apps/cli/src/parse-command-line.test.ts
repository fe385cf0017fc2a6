import { UsageError } from './cli-errors';
import { usageLine } from './command';
import { COMMANDS } from './commands';
import { parseCommandLine, unionOptions } from './parse-command-line';

const parse = (line: string[]) => parseCommandLine(line, COMMANDS);

function usageErrorOf(line: string[]): UsageError {
  try {
    parse(line);
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error(`expected a usage error for ${line.join(' ')}`);
}

describe('parseCommandLine', () => {
  it('finds the command and its arguments with options before, between and after the words', () => {
    const parsed = parse(['--url', 'http://x:1', 'token', '--json', 'revoke', 'tk1', '--bot', 'acme']);
    if (parsed.kind !== 'command') throw new Error(parsed.kind);
    expect(parsed.spec.path).toEqual(['token', 'revoke']);
    expect(parsed.globals).toEqual({ url: 'http://x:1', adminToken: undefined, json: true, help: false, version: false });
    expect(parsed.input.arg('tokenId')).toBe('tk1');
    expect(parsed.input.required('bot')).toBe('acme');
  });

  it('collects repeated options in order', () => {
    const parsed = parse(['entity', 'create', 'acme', 'Order', '--field', 'A', '--field=B']);
    if (parsed.kind !== 'command') throw new Error(parsed.kind);
    expect(parsed.input.list('field')).toEqual(['A', 'B']);
    expect(parsed.input.arg('entityName')).toBe('Order');
  });

  it('hands everything after a service name to that service untouched', () => {
    expect(parse(['up', '--port', '9', 'whatever'])).toEqual({ kind: 'service', name: 'up', args: ['--port', '9', 'whatever'] });
    expect(parse(['executor', '--pools', 'default,bulk'])).toEqual({ kind: 'service', name: 'executor', args: ['--pools', 'default,bulk'] });
  });

  it("shows a service's help for --help or -h after its name, instead of starting it", () => {
    expect(parse(['up', '--help'])).toMatchObject({ kind: 'help', topic: ['up'], requested: true });
    expect(parse(['executor', '--pools', 'bulk', '-h'])).toMatchObject({ kind: 'help', topic: ['executor'], requested: true });
  });

  it('answers help in all its spellings', () => {
    expect(parse([])).toMatchObject({ kind: 'help', topic: [], requested: false });
    expect(parse(['--help'])).toMatchObject({ kind: 'help', topic: [], requested: true });
    expect(parse(['help', 'token', 'create'])).toMatchObject({ kind: 'help', topic: ['token', 'create'], requested: true });
    expect(parse(['token', 'create', '-h'])).toMatchObject({ kind: 'help', topic: ['token', 'create'], requested: true });
    expect(parse(['token'])).toMatchObject({ kind: 'help', topic: ['token'], requested: false });
    expect(parse(['token', '--help'])).toMatchObject({ kind: 'help', topic: ['token'], requested: true });
  });

  it('reports what is wrong and where to look', () => {
    expect(usageErrorOf(['frobnicate'])).toMatchObject({ message: 'unknown command "frobnicate"', helpCommand: 'gi help', exitCode: 2 });
    expect(usageErrorOf(['token', 'frob'])).toMatchObject({ message: 'unknown command "gi token frob"', helpCommand: 'gi help token' });
    expect(usageErrorOf(['token', 'create'])).toMatchObject({ message: 'missing --bot', helpCommand: 'gi token create --help' });
    expect(usageErrorOf(['token', 'revoke', '--bot', 'acme'])).toMatchObject({ message: 'missing <tokenId>' });
    expect(usageErrorOf(['token', 'revoke', '--bot', 'acme', 'a', 'b'])).toMatchObject({ message: 'unexpected argument "b"' });
    expect(usageErrorOf(['token', 'list', '--bot'])).toMatchObject({ message: "option '--bot <value>' argument missing" });
    expect(usageErrorOf(['token', 'list', '--bot', 'acme', '--ttl', '5'])).toMatchObject({ message: "unknown option '--ttl' for gi token list" });
    expect(usageErrorOf(['token', 'list', '--nope'])).toMatchObject({ message: "unknown option '--nope'" });
  });

  it('declares every option with one type across commands', () => {
    expect(() => unionOptions(COMMANDS)).not.toThrow();
  });
});

describe('CommandInput', () => {
  const inputOf = (line: string[]) => {
    const parsed = parse(line);
    if (parsed.kind !== 'command') throw new Error(parsed.kind);
    return parsed.input;
  };

  it('checks whole numbers and names', () => {
    const input = inputOf(['token', 'create', '--bot', 'a/b', '--ttl', '1.5']);
    expect(() => input.int('ttl', 1, 100)).toThrow('--ttl must be a whole number from 1 to 100, got "1.5"');
    expect(() => input.requiredName('bot')).toThrow(`--bot "a/b" must be 1-128 letters, digits, '_', '.' or '-', starting with a letter or digit`);
    expect(inputOf(['token', 'create', '--bot', 'acme', '--ttl', '60']).int('ttl', 1, 100)).toBe(60);
  });
});

describe('usageLine', () => {
  it('lists arguments, then required options, then optional ones', () => {
    const deploy = COMMANDS.find((c) => c.path.join(' ') === 'connector deploy');
    expect(deploy && usageLine(deploy)).toBe(
      'gi connector deploy <file> --bot BOT --integration ID --entity E [--pool P] [--timeout SECONDS] [--allowed-host H ...] ' +
        '[--memory-mib MIB] [--cpu-seconds SECONDS] [--response-body-kib KIB] [--log-kib KIB] [--pending-calls N] [--callback-url URL] ' +
        '[--inbound-auth SCHEME] [--inbound-secret NAME] [--inbound-previous-secret NAME] [--inbound-allow-bearer] [--inbound-option NAME=VALUE ...] [--draft]',
    );
  });
});

import { SERVICE_NAMES, type ServiceName } from './service-names';
import { parseArgs } from 'node:util';
import { UsageError } from './cli-errors';
import { commandName, type CommandSpec, type OptionSpecs } from './command';
import { CommandInput } from './command-input';
import { GLOBAL_OPTIONS, type GlobalValues } from './global-options';

export type ParsedCommandLine =
  | { kind: 'service'; name: ServiceName; args: string[] }
  /** topic: the words after `help` (or of the command given --help); requested false when no command was given. */
  | { kind: 'help'; topic: string[]; requested: boolean; globals: GlobalValues }
  | { kind: 'command'; spec: CommandSpec; input: CommandInput; globals: GlobalValues };

type RawValues = Record<string, string | boolean | Array<string | boolean> | undefined>;

/** Options of every command at once: used to find the command words wherever options appear. */
export function unionOptions(commands: readonly CommandSpec[]): OptionSpecs {
  const union: OptionSpecs = { ...GLOBAL_OPTIONS };
  for (const spec of commands) {
    for (const [name, option] of Object.entries(spec.options)) {
      const seen = union[name];
      if (seen && (seen.type !== option.type || Boolean(seen.multiple) !== Boolean(option.multiple))) {
        throw new Error(`option --${name} is declared differently by ${commandName(spec)}`);
      }
      union[name] = seen ?? option;
    }
  }
  return union;
}

const toParseArgs = (options: OptionSpecs) =>
  Object.fromEntries(
    Object.entries(options).map(([name, o]) => [name, { type: o.type, ...(o.multiple && { multiple: true }), ...(o.short && { short: o.short }) }]),
  );

function parse(args: string[], options: OptionSpecs, helpCommand: string, context: string) {
  try {
    return parseArgs({ args, options: toParseArgs(options), allowPositionals: true, strict: true });
  } catch (error) {
    // Node's messages carry advice about '--' that only confuses here: keep the first sentence.
    // Errors from node:util may come from another realm (test runners): read the message by shape.
    const raw = typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error);
    const text = raw.replace(/^\w*Error \[\w+\]: /, '');
    const message = text.split('. ')[0].replace(/\.$/, '');
    throw new UsageError(`${message.charAt(0).toLowerCase()}${message.slice(1)}${context}`, helpCommand);
  }
}

const globalsOf = (values: RawValues): GlobalValues => ({
  url: typeof values.url === 'string' ? values.url : undefined,
  adminToken: typeof values['admin-token'] === 'string' ? values['admin-token'] : undefined,
  json: values.json === true,
  help: values.help === true,
  version: values.version === true,
});

const matches = (spec: CommandSpec, words: string[]) => spec.path.every((word, i) => words[i] === word);

/**
 * `gi [global options] <command words> [arguments and options]`. Options may come before or after
 * the command words; a service name (`up`, `gateway`, ...) hands everything after it to that service.
 */
export function parseCommandLine(argv: string[], commands: readonly CommandSpec[]): ParsedCommandLine {
  const service = SERVICE_NAMES.find((name) => name === argv[0]);
  // `gi up --help` asks for help, not for a service started with an option it does not know.
  if (service && argv.slice(1).some((arg) => arg === '--help' || arg === '-h')) return { kind: 'help', topic: [service], requested: true, globals: globalsOf({}) };
  if (service) return { kind: 'service', name: service, args: argv.slice(1) };

  const first = parse(argv, unionOptions(commands), 'gi help', '');
  const globals = globalsOf(first.values);
  // `gi --version` is `gi version`, wherever the option stands.
  const words = globals.version ? ['version'] : first.positionals;
  if (words[0] === 'help') return { kind: 'help', topic: words.slice(1), requested: true, globals };
  if (words.length === 0) return { kind: 'help', topic: [], requested: globals.help, globals };

  const spec = [...commands].sort((a, b) => b.path.length - a.path.length).find((c) => matches(c, words));
  if (!spec) {
    const group = commands.filter((c) => c.path.length > 1 && c.path[0] === words[0]);
    if (group.length === 0) throw new UsageError(`unknown command "${words[0]}"`);
    if (globals.help || words.length === 1) return { kind: 'help', topic: [words[0]], requested: globals.help, globals };
    throw new UsageError(`unknown command "gi ${words[0]} ${words[1]}"`, `gi help ${words[0]}`);
  }
  if (globals.help) return { kind: 'help', topic: [...spec.path], requested: true, globals };

  const helpCommand = `${commandName(spec)} --help`;
  const second = parse(argv, { ...GLOBAL_OPTIONS, ...spec.options }, helpCommand, ` for ${commandName(spec)}`);
  const args = second.positionals.slice(spec.path.length);
  if (args.length > spec.args.length) throw new UsageError(`unexpected argument "${args[spec.args.length]}"`, helpCommand);
  if (args.length < spec.args.length) throw new UsageError(`missing <${spec.args[args.length]}>`, helpCommand);
  for (const [name, option] of Object.entries(spec.options)) {
    if (option.required && second.values[name] === undefined) throw new UsageError(`missing --${name}`, helpCommand);
  }
  const positional = Object.fromEntries(spec.args.map((name, i) => [name, args[i]]));
  return { kind: 'command', spec, input: new CommandInput(positional, second.values, helpCommand), globals };
}

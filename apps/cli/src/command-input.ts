import { isValidName } from '@gi/domain';
import { UsageError } from './cli-errors';

type RawValue = string | boolean | Array<string | boolean> | undefined;

/** Typed access to one command's parsed arguments and options, with usage errors that name the option. */
export class CommandInput {
  constructor(
    private readonly positional: Record<string, string>,
    private readonly values: Record<string, RawValue>,
    private readonly helpCommand: string,
  ) {}

  usage(message: string): UsageError {
    return new UsageError(message, this.helpCommand);
  }

  arg(name: string): string {
    const value = this.positional[name];
    if (value === undefined) throw this.usage(`missing <${name}>`);
    return value;
  }

  string(name: string): string | undefined {
    const value = this.values[name];
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    return typeof last === 'string' ? last : undefined;
  }

  required(name: string): string {
    const value = this.string(name);
    if (value === undefined) throw this.usage(`missing --${name}`);
    return value;
  }

  list(name: string): string[] {
    const value = this.values[name];
    const all = Array.isArray(value) ? value : value === undefined ? [] : [value];
    return all.filter((v): v is string => typeof v === 'string');
  }

  flag(name: string): boolean {
    return this.values[name] === true;
  }

  int(name: string, min: number, max: number): number | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
      throw this.usage(`--${name} must be a whole number from ${min} to ${max}, got "${text}"`);
    }
    return value;
  }

  /** A positive number such as 0.5 or 20. */
  positive(name: string, max: number): number | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!/^\d+(\.\d+)?$/.test(text.trim()) || !(value > 0) || value > max) {
      throw this.usage(`--${name} must be a number above 0 and at most ${max}, got "${text}"`);
    }
    return value;
  }

  /** A bot id, entity name, integration id, token id or pool: checked here so the URL stays plain. */
  name(label: string, value: string): string {
    if (!isValidName(value)) {
      throw this.usage(`${label} "${value}" must be 1-128 letters, digits, '_', '.' or '-', starting with a letter or digit`);
    }
    return value;
  }

  requiredName(option: string): string {
    return this.name(`--${option}`, this.required(option));
  }

  argName(arg: string): string {
    return this.name(`<${arg}>`, this.arg(arg));
  }
}

import { base64Module } from './base64.host';
import { encodingModule } from './encoding.host';
import { eventsModule } from './events.host';
import { fetchModule } from './fetch.host';
import type { GlobalsModule } from './host-module';
import { cryptoModule } from './crypto.host';
import { durableModule } from './durable.host';
import { intlModule } from './intl.host';
import { structuredCloneModule } from './structured-clone.host';
import { urlModule } from './url.host';

/**
 * The modules of connector globals loaded on first use, in the order they may be loaded (a module
 * comes after those it requires). The core module (timers, performance, DOMException) is always there.
 */
const MODULES: readonly GlobalsModule[] = [urlModule, encodingModule, base64Module, structuredCloneModule, eventsModule, cryptoModule, intlModule, fetchModule, durableModule];

export const GLOBALS_MODULES: ReadonlyMap<string, GlobalsModule> = new Map(MODULES.map((module) => [module.name, module]));

/** What the core module needs to put stubs in place of each module's globals, methods and members of `Context`. */
export function lazyModules(): Array<{ name: string; globals: string[]; methods: Array<[string, string]>; contextMembers: string[] }> {
  return MODULES.map(({ name, globals, methods = [], contextMembers = [] }) => ({
    name,
    globals: [...globals],
    methods: methods.map(([path, method]) => [path, method]),
    contextMembers: [...contextMembers],
  }));
}

/** The modules with every module they require, each once, requirements first. */
export function withRequirements(names: Iterable<string>): string[] {
  const ordered: string[] = [];
  const visit = (name: string) => {
    if (ordered.includes(name)) return;
    const module = GLOBALS_MODULES.get(name);
    if (!module) throw new Error(`No connector globals module '${name}'.`);
    for (const required of module.requires ?? []) visit(required);
    ordered.push(name);
  };
  for (const name of names) visit(name);
  return ordered;
}

/**
 * A global's name, unless it is a property of something other than the global object
 * (`Context.Http.Request` names no global `Request`; `globalThis.Request` and `self.Request` do).
 */
const globalName = (names: readonly string[]) => `(?<![\\w$])(?<!(?<!\\b(?:globalThis|self)\\s*)(?:\\?)?\\.\\s*)(?:${names.join('|')})(?![\\w$])`;

const NAMED = MODULES.map((module) => ({
  name: module.name,
  pattern: new RegExp(
    [
      ...(module.globals.length ? [globalName(module.globals)] : []),
      ...(module.methods?.length ? [`\\b(?:${module.methods.map(([, method]) => method).join('|')})\\b`] : []),
      ...(module.contextMembers?.length ? [`\\b(?:${module.contextMembers.join('|')})\\b`] : []),
    ].join('|'),
  ),
}));

/**
 * The modules whose names a connector's code mentions: loaded ahead into its sandbox's memory image,
 * so its runs find them ready. A name the scan misses (built at run time) still works: touching it
 * loads the module during the run, and the sandboxes made next for the connector have it ahead.
 */
export function modulesNamedIn(code: string): string[] {
  return NAMED.filter(({ pattern }) => pattern.test(code)).map(({ name }) => name);
}

import type { GlobalsModule } from './host-module';

/** `structuredClone`: it all happens in the sandbox (the values live there); no host functions. */
export const structuredCloneModule: GlobalsModule = {
  name: 'structured-clone',
  globals: ['structuredClone'],
  functions: {},
};

import { createRequire } from 'node:module';
import { newQuickJSWASMModule, RELEASE_SYNC, type QuickJSSyncVariant, type QuickJSWASMModule } from 'quickjs-emscripten';

/**
 * The RELEASE_SYNC variant, with its Emscripten loader taken through `require` instead of a dynamic
 * `import()`: the same file either way, but `require` also works where dynamic import is not
 * available (jest's module sandbox, bundles).
 */
function releaseSyncVariant(): QuickJSSyncVariant {
  const fromQuickJs = createRequire(createRequire(__filename).resolve('quickjs-emscripten'));
  type ModuleImport = Awaited<ReturnType<QuickJSSyncVariant['importModuleLoader']>>;
  type Loader = (options?: object) => Promise<unknown>;
  return {
    ...RELEASE_SYNC,
    importModuleLoader: async () => {
      const load = fromQuickJs('@jitl/quickjs-wasmfile-release-sync/emscripten-module') as Loader;
      // The engine's own console output (an abort notice) is handled by the caller, not printed.
      const quiet: Loader = (options) => load({ ...options, print: () => {}, printErr: () => {} });
      return quiet as unknown as ModuleImport;
    },
  };
}

let loading: Promise<QuickJSWASMModule> | undefined;

/** The QuickJS WebAssembly module, compiled once per thread and shared by every run on it. */
export function loadQuickJs(): Promise<QuickJSWASMModule> {
  loading ??= newQuickJSWASMModule(releaseSyncVariant()).catch((error: unknown) => {
    loading = undefined; // let a later call try again
    throw error;
  });
  return loading;
}

/** A fresh module, for when the shared one may be damaged (a host-level fault inside the engine). */
export function reloadQuickJs(): Promise<QuickJSWASMModule> {
  loading = undefined;
  return loadQuickJs();
}

import { newQuickJSWASMModule, RELEASE_SYNC, type QuickJSWASMModule } from 'quickjs-emscripten';

let loading: Promise<QuickJSWASMModule> | undefined;

/** The QuickJS WebAssembly module, compiled once per thread and shared by every run on it. */
export function loadQuickJs(): Promise<QuickJSWASMModule> {
  loading ??= newQuickJSWASMModule(RELEASE_SYNC).catch((error: unknown) => {
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

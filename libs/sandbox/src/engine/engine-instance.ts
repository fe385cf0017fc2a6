import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { newQuickJSWASMModule, RELEASE_SYNC, type QuickJSSyncVariant, type QuickJSWASMModule } from 'quickjs-emscripten';
import { readEngineLayout, type EngineLayout } from './engine-layout';
import { findHeapBreak, type EngineAllocator } from './heap-break';
import { MiB } from '../sandbox-options';

/** Pages of the WebAssembly memory the engine declares it needs at least: 16 MiB. */
const INITIAL_PAGES = 256;
const PAGE_BYTES = 65536;
/** The largest memory a 32-bit engine can address. */
const MAX_PAGES = 32768;

/** Memory the engine takes for itself (static data, its C stack) before any connector data. */
export const ENGINE_OWN_BYTES = 6 * MiB;
/** The memory a new instance starts with. */
export const INITIAL_ENGINE_BYTES = INITIAL_PAGES * PAGE_BYTES;

const fromQuickJs = createRequire(createRequire(__filename).resolve('quickjs-emscripten'));
type EmscriptenLoader = (options?: object) => Promise<unknown>;

interface CompiledEngine {
  code: WebAssembly.Module;
  layout: EngineLayout;
}

let compiled: Promise<CompiledEngine> | undefined;

/**
 * The engine's WebAssembly code, compiled once per thread and instantiated for every instance, and its
 * memory layout, with where its allocator keeps the break (found in an instance made for that alone).
 */
function compiledEngine(): Promise<CompiledEngine> {
  compiled ??= readFile(fromQuickJs.resolve('@jitl/quickjs-wasmfile-release-sync/wasm'))
    .then(async (bytes) => {
      const code = await WebAssembly.compile(bytes);
      const layout = readEngineLayout(bytes);
      const probe = await instantiate(code);
      return { code, layout: { ...layout, breakAt: findHeapBreak(probe.capped.memory, layout, probe.allocator) } };
    })
    .catch((error: unknown) => {
      compiled = undefined; // let a later call try again
      throw error;
    });
  return compiled;
}

/**
 * A WebAssembly memory whose growth can be capped. Emscripten grows the heap through the memory's
 * `grow` method (its resize_heap import); a throw there makes the growth, and with it the
 * allocation, fail.
 */
class CappedMemory {
  readonly memory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: MAX_PAGES });
  capBytes = MAX_PAGES * PAGE_BYTES;
  /** Whether the last growth was refused. */
  refused = false;

  constructor() {
    const grow = this.memory.grow.bind(this.memory);
    this.memory.grow = (pages: number) => {
      // Emscripten asks for room to spare first, then less: only the last refusal fails the allocation.
      this.refused = this.memory.buffer.byteLength + pages * PAGE_BYTES > this.capBytes;
      if (this.refused) throw new RangeError('memory cap reached');
      return grow(pages);
    };
  }
}

/** What quickjs-emscripten uses of an Emscripten module to move strings in and out of the engine. */
interface StringFunctions {
  HEAPU8: Uint8Array;
  UTF8ToString(pointer: number, maxBytes?: number): string;
  stringToUTF8(text: string, pointer: number, maxBytes: number): number;
  lengthBytesUTF8(text: string): number;
}

const utf8Decoder = new TextDecoder('utf-8', { ignoreBOM: true });
const utf8Encoder = new TextEncoder();

/**
 * Emscripten's string functions replaced by Node's: its own walk a string one character at a time
 * in JavaScript (a 64 KiB string took about 300 microseconds each way), and its decoder drops a
 * leading U+FEFF. Lone surrogates become U+FFFD on the way, as before; text that holds them (or
 * U+0000, which ends a C string) is moved as JSON by the globals bridge.
 */
function withNodeStrings<T>(module: T): T {
  const strings = module as unknown as StringFunctions;
  strings.UTF8ToString = (pointer, maxBytes) => {
    if (!pointer) return '';
    const heap = strings.HEAPU8;
    const limit = maxBytes === undefined ? heap.length : Math.min(heap.length, pointer + maxBytes);
    const end = heap.indexOf(0, pointer);
    return utf8Decoder.decode(heap.subarray(pointer, end < 0 || end > limit ? limit : end));
  };
  strings.lengthBytesUTF8 = (text) => Buffer.byteLength(text, 'utf8');
  strings.stringToUTF8 = (text, pointer, maxBytes) => {
    if (maxBytes <= 0) return 0;
    const heap = strings.HEAPU8;
    const { written } = utf8Encoder.encodeInto(text, heap.subarray(pointer, pointer + maxBytes - 1));
    heap[pointer + written] = 0;
    return written;
  };
  return module;
}

/** A new instance of the engine's code, with a capped memory of its own, and its allocator's functions. */
async function instantiate(engine: WebAssembly.Module): Promise<{ module: QuickJSWASMModule; capped: CappedMemory; allocator: EngineAllocator }> {
  const capped = new CappedMemory();
  let allocator: EngineAllocator | undefined;
  const load = fromQuickJs('@jitl/quickjs-wasmfile-release-sync/emscripten-module') as EmscriptenLoader;
  const variant: QuickJSSyncVariant = {
    ...RELEASE_SYNC,
    importModuleLoader: async () =>
      ((options?: object) =>
        load({
          ...options,
          wasmMemory: capped.memory,
          instantiateWasm: (imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) => {
            done(new WebAssembly.Instance(engine, imports), engine);
            return {};
          },
          // The engine's own console output (an abort notice) is handled by the caller, not printed.
          print: () => {},
          printErr: () => {},
        }).then((emscripten) => {
          const { _malloc: malloc, _free: free } = emscripten as { _malloc: EngineAllocator['malloc']; _free: EngineAllocator['free'] };
          allocator = { malloc, free };
          return withNodeStrings(emscripten);
        })) as unknown as Awaited<ReturnType<QuickJSSyncVariant['importModuleLoader']>>,
  };
  const module = await newQuickJSWASMModule(variant);
  if (!allocator) throw new Error('The engine module exports no allocator.');
  return { module, capped, allocator };
}

/**
 * One instance of the QuickJS engine with a WebAssembly memory of its own. Its memory is capped:
 * QuickJS's own memory limit counts the objects it allocates but not the bytes of large strings
 * and ArrayBuffers (its allocator cannot tell block sizes under Emscripten), so the hard limit is
 * the memory itself. When an allocation would grow it past the cap, the growth fails and QuickJS
 * throws "out of memory" in the connector. An instance serves one run at a time; the memory it
 * grew to stays until the instance is dropped, and is freed with it.
 */
export class EngineInstance {
  private constructor(
    readonly module: QuickJSWASMModule,
    private readonly capped: CappedMemory,
    readonly layout: EngineLayout,
  ) {}

  static async create(): Promise<EngineInstance> {
    const { code, layout } = await compiledEngine();
    const { module, capped } = await instantiate(code);
    return new EngineInstance(module, capped, layout);
  }

  /** The instance's memory: its whole state, kept and put back by memory images. */
  get memory(): WebAssembly.Memory {
    return this.capped.memory;
  }

  /** The memory the instance has grown to, in bytes. */
  get memoryBytes(): number {
    return this.capped.memory.buffer.byteLength;
  }

  /** Lets the memory grow to at most `bytes` in all, from now on. */
  capMemory(bytes: number): void {
    this.capped.capBytes = Math.min(MAX_PAGES * PAGE_BYTES, Math.max(INITIAL_ENGINE_BYTES, bytes));
    this.capped.refused = false;
  }

  /**
   * True once an allocation failed at the cap (within about 5%: Emscripten grows the memory by at
   * least 5% at a time). The engine may then be short of memory anywhere, even to report an error.
   */
  get exhausted(): boolean {
    return this.capped.refused;
  }
}

/**
 * Where the engine keeps its state in its WebAssembly memory. Emscripten lays the memory out as
 * static data (initialised data, then zeroed data), the C stack growing down from `stackTop`, and the
 * heap from `stackTop` up. Between two calls into the engine the stack holds nothing live, so the
 * engine's whole state is the static data and the heap: that is what a memory image keeps.
 */
export interface EngineLayout {
  /** End of the static data: everything below it is the engine's static state. */
  staticEnd: number;
  /** Where the stack starts (it grows down) and the heap begins. */
  stackTop: number;
  /**
   * Where in the static data the allocator keeps its break (the end of the memory it has taken for
   * the heap), once found in a running instance (heap-break.ts); null when not found.
   */
  breakAt?: number | null;
}

/**
 * The C stack quickjs-emscripten builds its engine with (`-s STACK_SIZE=5MB` in its Variant.mk). The
 * zeroed static data lies between the initialised data and the stack's lowest address; the binary
 * records neither its end nor the stack size, so the stack size is this build setting.
 */
export const ENGINE_STACK_BYTES = 5 * 1024 * 1024;

const SECTION_GLOBAL = 6;
const SECTION_DATA = 11;
const TYPE_I32 = 0x7f;
const OP_I32_CONST = 0x41;
const OP_END = 0x0b;

/** Reads the layout from the engine's WebAssembly binary; throws when the binary is not laid out as expected. */
export function readEngineLayout(wasm: Uint8Array): EngineLayout {
  const reader = new WasmReader(wasm);
  let stackTop: number | null = null;
  let dataEnd = 0;
  for (const section of reader.sections()) {
    if (section.id === SECTION_GLOBAL) stackTop = firstMutableI32Global(reader);
    if (section.id === SECTION_DATA) dataEnd = activeDataEnd(reader);
    reader.offset = section.end;
  }
  if (stackTop === null) throw new Error('The engine binary declares no stack pointer.');
  const staticEnd = stackTop - ENGINE_STACK_BYTES;
  if (staticEnd < dataEnd) {
    throw new Error(`The engine binary is not laid out as expected: its data ends at ${dataEnd}, above the stack's lowest address ${staticEnd}.`);
  }
  return { staticEnd, stackTop };
}

/** The stack pointer: by the linker's convention the first global, a mutable i32 set to the stack's top. */
function firstMutableI32Global(reader: WasmReader): number | null {
  if (reader.u32() === 0) return null;
  const type = reader.byte();
  const mutable = reader.byte() === 1;
  if (type !== TYPE_I32 || !mutable || reader.byte() !== OP_I32_CONST) return null;
  const value = reader.i32();
  return reader.byte() === OP_END ? value : null;
}

/** The highest address any active data segment with a constant offset writes to. */
function activeDataEnd(reader: WasmReader): number {
  let end = 0;
  const count = reader.u32();
  for (let i = 0; i < count; i++) {
    const flags = reader.u32();
    let offset = 0;
    if (flags === 0 || flags === 2) {
      if (flags === 2) reader.u32(); // memory index
      if (reader.byte() !== OP_I32_CONST) throw new Error('The engine binary places a data segment at a computed address.');
      offset = reader.i32();
      if (reader.byte() !== OP_END) throw new Error('The engine binary places a data segment at a computed address.');
    }
    const size = reader.u32();
    if (flags !== 1) end = Math.max(end, offset + size);
    reader.offset += size;
  }
  return end;
}

/** Just enough of a WebAssembly binary reader: sections and LEB128 numbers. */
class WasmReader {
  offset = 8; // past the magic number and the version

  constructor(private readonly bytes: Uint8Array) {}

  *sections(): Generator<{ id: number; end: number }> {
    while (this.offset < this.bytes.length) {
      const id = this.byte();
      const size = this.u32();
      yield { id, end: this.offset + size };
    }
  }

  byte(): number {
    return this.bytes[this.offset++];
  }

  u32(): number {
    let result = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = this.byte();
      result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return result;
  }

  i32(): number {
    let result = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = this.byte();
      result |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    return shift < 32 && byte & 0x40 ? result | (-1 << shift) : result;
  }
}

import type { EngineLayout } from './engine-layout';

const BLOCK_BYTES = 64 * 1024;
const ZERO_BLOCK = Buffer.alloc(BLOCK_BYTES);

/**
 * A copy of an engine instance's state, taken between two calls into the engine: its static data
 * and its heap up to the allocator's top. Putting it back returns the engine to exactly that
 * moment, whatever ran since: every object, the allocator, the garbage collector's lists. Memory
 * above the image's heap is free space to the restored allocator, so what a run left there is
 * never read as data (allocations that must be zero are cleared by the allocator).
 */
export class MemoryImage {
  private constructor(
    private readonly layout: EngineLayout,
    private readonly staticBytes: Uint8Array,
    private readonly heapBytes: Uint8Array,
  ) {}

  /**
   * Takes the image. The heap ends at the last non-zero byte: the allocator's top chunk begins with
   * its size, so nothing the allocator tracks lies above it in memory never used before. Take
   * images only of instances that never ran a connector, or that garbage is copied too.
   */
  static capture(memory: WebAssembly.Memory, layout: EngineLayout): MemoryImage {
    const bytes = new Uint8Array(memory.buffer);
    return new MemoryImage(layout, bytes.slice(0, layout.staticEnd), bytes.slice(layout.stackTop, heapEnd(memory, layout)));
  }

  restore(memory: WebAssembly.Memory): void {
    const bytes = new Uint8Array(memory.buffer);
    bytes.set(this.staticBytes, 0);
    bytes.set(this.heapBytes, this.layout.stackTop);
  }
}

/**
 * Where the heap in use ends (see `MemoryImage.capture`), in an instance that never ran a connector.
 * Looked for below the allocator's break when the layout knows where it is kept: the allocator hands
 * out memory only below it, so above it the memory was never touched. Reading those pages made the
 * kernel map each one: about 40 ms of CPU per new sandbox on the reference machine, for a heap that
 * ends some 100 KB above the stack.
 */
export function heapEnd(memory: WebAssembly.Memory, layout: EngineLayout): number {
  const bytes = new Uint8Array(memory.buffer);
  const brk = layout.breakAt == null ? bytes.length : new DataView(memory.buffer).getUint32(layout.breakAt, true);
  return lastNonZero(bytes, layout.stackTop, brk >= layout.stackTop && brk <= bytes.length ? brk : bytes.length) + 1;
}

/** The index of the last non-zero byte in [from, to) (from - 1 when there is none), found block by block from the top. */
export function lastNonZero(bytes: Uint8Array, from: number, to = bytes.length): number {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = to;
  while (end > from) {
    const start = Math.max(from, end - BLOCK_BYTES);
    if (!buffer.subarray(start, end).equals(ZERO_BLOCK.subarray(0, end - start))) {
      for (let i = end - 1; i >= start; i--) if (bytes[i] !== 0) return i;
    }
    end = start;
  }
  return from - 1;
}

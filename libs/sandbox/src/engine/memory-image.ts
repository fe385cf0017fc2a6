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

/** Where the heap in use ends (see `MemoryImage.capture`). */
export function heapEnd(memory: WebAssembly.Memory, layout: EngineLayout): number {
  return lastNonZero(new Uint8Array(memory.buffer), layout.stackTop) + 1;
}

/** The index of the last non-zero byte at or above `from` (from - 1 when there is none), found block by block from the top. */
function lastNonZero(bytes: Uint8Array, from: number): number {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = bytes.length;
  while (end > from) {
    const start = Math.max(from, end - BLOCK_BYTES);
    if (!buffer.subarray(start, end).equals(ZERO_BLOCK.subarray(0, end - start))) {
      for (let i = end - 1; i >= start; i--) if (bytes[i] !== 0) return i;
    }
    end = start;
  }
  return from - 1;
}

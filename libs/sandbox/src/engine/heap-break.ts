import type { EngineLayout } from './engine-layout';
import { lastNonZero } from './memory-image';

/** The allocator's functions, as the engine exports them. */
export interface EngineAllocator {
  malloc(bytes: number): number;
  free(pointer: number): void;
}

/** More than a new instance's heap holds free: the allocator must take it from above its break. */
const PROBE_BYTES = 1024 * 1024;

/**
 * Finds where the allocator keeps its break, in an instance made for the purpose (it is changed):
 * the one word of the static data that lies at or above every byte the heap has written, and that
 * moves past a block allocated then. Null when no word, or more than one, behaves so: the heap's end
 * is then looked for in the whole memory, as before.
 */
export function findHeapBreak(memory: WebAssembly.Memory, layout: EngineLayout, allocator: EngineAllocator): number | null {
  const words = (buffer: ArrayBufferLike) => new Uint32Array(buffer, 0, Math.floor(layout.staticEnd / 4));
  const end = lastNonZero(new Uint8Array(memory.buffer), layout.stackTop) + 1;
  const before = words(memory.buffer).slice();
  const block = allocator.malloc(PROBE_BYTES);
  if (block === 0) return null;
  const after = words(memory.buffer);
  const found: number[] = [];
  for (let i = 0; i < before.length; i++) {
    const was = before[i];
    if (was >= end && was <= memory.buffer.byteLength && after[i] >= block + PROBE_BYTES && after[i] > was) found.push(i * 4);
  }
  allocator.free(block);
  return found.length === 1 ? found[0] : null;
}

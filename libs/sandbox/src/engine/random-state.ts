import { randomFillSync } from 'node:crypto';

/**
 * `Math.random` of a QuickJS context draws from a 64-bit xorshift* state kept in the context, seeded
 * from the clock when the context is made. A memory image would hand every run the same state, and
 * every run would draw the same numbers; so the state is found once per sandbox and seeded afresh
 * from the host's CSPRNG as every run begins (finding it leaves a fixed state in the image).
 */
export class RandomState {
  private constructor(
    private readonly memory: WebAssembly.Memory,
    private readonly offset: number,
  ) {}

  /**
   * Finds the state in `heap`: of the 64-bit words one call of `draw` (the context's Math.random)
   * changes, the one whose next output is the number drawn, confirmed by seeding it and drawing again.
   */
  static locate(memory: WebAssembly.Memory, heap: { start: number; end: number }, draw: () => number): RandomState {
    const length = heap.end - heap.start;
    const before = new DataView(memory.buffer.slice(heap.start, heap.end));
    const drawn = mantissaOf(draw());
    const after = new DataView(memory.buffer, heap.start, length);
    for (let at = (8 - (heap.start % 8)) % 8; at + 8 <= length; at += 8) {
      const word = after.getBigUint64(at, true);
      if (word === before.getBigUint64(at, true) || output(word) !== drawn) continue;
      const state = new RandomState(memory, heap.start + at);
      if (state.confirm(draw)) return state;
    }
    throw new Error("The engine's Math.random state could not be found, so runs could not be given their own random numbers.");
  }

  /** Gives the next run a state of its own. */
  reseed(): void {
    this.write(nextSeed());
  }

  private confirm(draw: () => number): boolean {
    const seed = 0x9e3779b97f4a7c15n;
    this.write(seed);
    return mantissaOf(draw()) === output(step(seed));
  }

  private write(seed: bigint): void {
    new DataView(this.memory.buffer).setBigUint64(this.offset, seed, true);
  }
}

const MASK_64 = (1n << 64n) - 1n;
const MULTIPLIER = 0x2545f4914f6cdd1dn;

/** QuickJS's xorshift64* step: the next state. */
function step(state: bigint): bigint {
  let x = state;
  x ^= x >> 12n;
  x = (x ^ (x << 25n)) & MASK_64;
  x ^= x >> 27n;
  return x;
}

/** The 52 bits of the number drawn from a state just stepped to. */
const output = (state: bigint) => ((state * MULTIPLIER) & MASK_64) >> 12n;

/** Math.random returns (1.m - 1) for a 52-bit mantissa m; adding 1 back is exact. */
function mantissaOf(drawn: number): bigint {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, drawn + 1);
  return view.getBigUint64(0) & ((1n << 52n) - 1n);
}

const seeds = new BigUint64Array(512);
let nextIndex = seeds.length;

/** A random non-zero 64-bit seed (xorshift never leaves zero), from a batch filled by the CSPRNG. */
function nextSeed(): bigint {
  for (;;) {
    if (nextIndex === seeds.length) {
      randomFillSync(seeds);
      nextIndex = 0;
    }
    const seed = seeds[nextIndex++];
    if (seed !== 0n) return seed;
  }
}

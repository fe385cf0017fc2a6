import type { IntlKit } from './kit';

/** Intl.Segmenter and the segments it yields. */
export function segmentation(kit: IntlKit) {
  const { call, initialize, slotOf, wire } = kit;
  class Segmenter {
    constructor(localesValue: unknown = undefined, options: unknown = undefined) {
      initialize(this, 'Segmenter', localesValue, options);
    }

    segment(value: unknown): Segments {
      const slot = slotOf(this, 'Segmenter', 'segment');
      const input = `${value as string}`;
      return makeSegments(input, new Uint32Array(call('segment', slot, wire(input)) as ArrayBuffer));
    }

    resolvedOptions(): unknown {
      return call('resolvedOptions', slotOf(this, 'Segmenter', 'resolvedOptions'));
    }
  }

  /**
   * The segments of a text: the host gives each segment's start, with bit 31 set when the segment
   * is word-like (word granularity only: then the last entry is 0xFFFFFFFF).
   */
  let makeSegments: (input: string, starts: Uint32Array) => Segments;
  class Segments {
    #input = '';
    #starts: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
    #words = false;

    static {
      delete (Segments.prototype as { constructor?: unknown }).constructor;
      makeSegments = (input, starts) => {
        const segments = new Segments();
        segments.#input = input;
        segments.#words = starts.length > 0 && starts[starts.length - 1] === 0xffffffff;
        segments.#starts = segments.#words ? starts.subarray(0, starts.length - 1) : starts;
        return segments;
      };
    }

    containing(index?: unknown): unknown {
      const n = Math.trunc(Number(index)) || 0;
      const starts = this.#starts;
      if (n < 0 || n >= this.#input.length) return undefined;
      let low = 0;
      let high = starts.length - 1;
      while (low < high) {
        const mid = (low + high + 1) >> 1;
        if ((starts[mid] & 0x7fffffff) <= n) low = mid;
        else high = mid - 1;
      }
      return this.#data(low);
    }

    *[Symbol.iterator](): Generator<unknown> {
      for (let i = 0; i < this.#starts.length; i++) yield this.#data(i);
    }

    #data(i: number) {
      const start = this.#starts[i] & 0x7fffffff;
      const end = i + 1 < this.#starts.length ? this.#starts[i + 1] & 0x7fffffff : this.#input.length;
      const data: Record<string, unknown> = { segment: this.#input.slice(start, end), index: start, input: this.#input };
      if (this.#words) data.isWordLike = (this.#starts[i] & 0x80000000) !== 0;
      return data;
    }
  }

  return { Segmenter };
}

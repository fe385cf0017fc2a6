/** Reading the bytes of buffers and views with the engine's own accessors (see primordials.ts). */
import { getter, uncurry } from './primordials';

const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype) as object;
/** The element type's name ('Uint8Array') of a typed array, undefined for anything else: a brand check that never throws. */
export const typedArrayName = /* @__PURE__ */ getter(TypedArrayPrototype, Symbol.toStringTag) as (value: unknown) => string | undefined;
export const typedArrayBuffer = /* @__PURE__ */ getter(TypedArrayPrototype, 'buffer') as (value: unknown) => ArrayBufferLike;
export const typedArrayOffset = /* @__PURE__ */ getter(TypedArrayPrototype, 'byteOffset') as (value: unknown) => number;
const typedArrayLength = /* @__PURE__ */ getter(TypedArrayPrototype, 'byteLength') as (value: unknown) => number;
/** The element count of a typed array. */
export const typedArrayElements = /* @__PURE__ */ getter(TypedArrayPrototype, 'length') as (value: unknown) => number;
export const dataViewBuffer = /* @__PURE__ */ getter(DataView.prototype, 'buffer') as (value: unknown) => ArrayBufferLike;
export const dataViewOffset = /* @__PURE__ */ getter(DataView.prototype, 'byteOffset') as (value: unknown) => number;
export const dataViewLength = /* @__PURE__ */ getter(DataView.prototype, 'byteLength') as (value: unknown) => number;
/** An ArrayBuffer's length; throws a TypeError for anything else. */
export const arrayBufferLength = /* @__PURE__ */ getter(ArrayBuffer.prototype, 'byteLength') as (value: unknown) => number;
export const sharedBufferLength = /* @__PURE__ */ getter(SharedArrayBuffer.prototype, 'byteLength') as (value: unknown) => number;
export const isDetached = /* @__PURE__ */ getter(ArrayBuffer.prototype, 'detached') as (value: unknown) => boolean;
export const setBytes = /* @__PURE__ */ uncurry((TypedArrayPrototype as Uint8Array).set as (source: ArrayLike<number>, offset?: number) => void);
export const { isView } = ArrayBuffer;

/** Bytes of a buffer: an ArrayBuffer or SharedArrayBuffer and a range of it. */
export interface ByteRange {
  buffer: ArrayBufferLike;
  byteOffset: number;
  byteLength: number;
  /** The range is the whole of an ArrayBuffer (not shared). */
  whole: boolean;
}

/** The bytes a BufferSource stands for (an ArrayBuffer, a SharedArrayBuffer, a typed array or a DataView); null for anything else. A detached buffer has none. */
export function byteRange(value: unknown): ByteRange | null {
  if (typeof value !== 'object' || value === null) return null;
  if (isView(value)) {
    // A detached typed array reads as empty; a DataView's getters throw once its buffer is detached.
    if (typedArrayName(value) !== undefined) return { buffer: typedArrayBuffer(value), byteOffset: typedArrayOffset(value), byteLength: typedArrayLength(value), whole: false };
    const buffer = dataViewBuffer(value);
    try {
      return { buffer, byteOffset: dataViewOffset(value), byteLength: dataViewLength(value), whole: false };
    } catch {
      return { buffer, byteOffset: 0, byteLength: 0, whole: false };
    }
  }
  try {
    const byteLength = arrayBufferLength(value);
    return { buffer: value as ArrayBuffer, byteOffset: 0, byteLength, whole: byteLength > 0 };
  } catch {
    // not an ArrayBuffer
  }
  try {
    return { buffer: value as SharedArrayBuffer, byteOffset: 0, byteLength: sharedBufferLength(value), whole: false };
  } catch {
    return null;
  }
}

/** The bytes of a range as an ArrayBuffer to hand to the host: the buffer itself when the range is all of one, else a copy. */
export function hostBuffer(range: ByteRange): ArrayBuffer {
  if (range.whole) return range.buffer as ArrayBuffer;
  const copy = new Uint8Array(range.byteLength);
  if (range.byteLength > 0) setBytes(copy, new Uint8Array(range.buffer, range.byteOffset, range.byteLength));
  return typedArrayBuffer(copy) as ArrayBuffer;
}

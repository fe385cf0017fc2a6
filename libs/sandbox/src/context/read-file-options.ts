/** How `Context.ReadFile` returns the bytes: UTF-8 text (the default), base64 text, or an ArrayBuffer. */
export type ReadFileEncoding = 'utf8' | 'base64' | 'bytes';

export interface ReadFileOptions {
  offset: number;
  /** Absent: to the end of the file, which must then fit in one call. */
  length: number | undefined;
  encoding: ReadFileEncoding;
}

/** Options a connector passed that cannot be used; the message is for the connector. */
export class ReadFileRefused extends Error {}

const ENCODINGS: readonly string[] = ['utf8', 'base64', 'bytes'];

/** Validates the options object of `Context.ReadFile(id, options)`; `cap` is the most bytes one call may return. */
export function parseReadFileOptions(raw: unknown, cap: number): ReadFileOptions {
  if (raw === undefined) throw new ReadFileRefused('Context.ReadFile options must be an object like { offset, length, encoding }.');
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ReadFileRefused('Context.ReadFile options must be an object like { offset, length, encoding }.');
  }
  const { offset = 0, length, encoding = 'utf8' } = raw as Record<string, unknown>;
  if (!isByteCount(offset)) throw new ReadFileRefused('Context.ReadFile offset must be a whole number of bytes, 0 or more.');
  if (length !== undefined && !isByteCount(length)) throw new ReadFileRefused('Context.ReadFile length must be a whole number of bytes, 0 or more.');
  if (typeof length === 'number' && length > cap) {
    throw new ReadFileRefused(`Context.ReadFile reads at most ${cap} bytes per call; ask for a smaller length.`);
  }
  if (typeof encoding !== 'string' || !ENCODINGS.includes(encoding)) {
    throw new ReadFileRefused(`Context.ReadFile encoding must be 'utf8', 'base64' or 'bytes'.`);
  }
  return { offset: offset as number, length: length as number | undefined, encoding: encoding as ReadFileEncoding };
}

const isByteCount = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/**
 * Platform version rules (spec section 9): async from 9.10, JSON default for sync replies from 9.17,
 * GenericIntegrationFileTransfer from 9.19.
 */
export type PlatformVersion = readonly [major: number, minor: number];

export function parsePlatformVersion(text: string): PlatformVersion | null {
  const match = /^(\d+)\.(\d+)$/.exec(text.trim());
  return match ? [Number(match[1]), Number(match[2])] : null;
}

const atLeast = (v: PlatformVersion, major: number, minor: number) => v[0] > major || (v[0] === major && v[1] >= minor);

export const supportsAsync = (v: PlatformVersion) => atLeast(v, 9, 10);
export const supportsFileTransfer = (v: PlatformVersion) => atLeast(v, 9, 19);

/** Default `responseContentType`: JSON from 9.17; before it, `text/plain` for sync calls. Async is always JSON. */
export function defaultResponseContentType(v: PlatformVersion, mode: 'sync' | 'async'): string {
  return mode === 'async' || atLeast(v, 9, 17) ? 'application/json' : 'text/plain';
}

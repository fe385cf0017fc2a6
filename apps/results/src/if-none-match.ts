/**
 * RFC 9110 13.1.2: does an If-None-Match header match the current ETag? Weak comparison (`W/` is
 * ignored); `*` matches any current representation. Evaluated whatever the request's Cache-Control:
 * fetch() adds `Cache-Control: no-cache` to every conditional request, which is for caches on the way,
 * not for the origin server's precondition.
 */
export function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => opaque(tag) === opaque(etag));
}

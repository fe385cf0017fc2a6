import { parse } from 'node:querystring';
import fc from 'fast-check';
import { GiError } from '@gi/domain';
import { ifNoneMatch } from './if-none-match';
import { MAX_WAIT_SECONDS, parseInvocationId, parsePollQuery } from './poll-query';

/**
 * Property-based fuzzing of what a poll sends: its query (parsed as Koa parses it) and If-None-Match.
 */

const queryText = fc
  .array(
    fc.oneof(
      fc.constantFrom('invocationId=abc', 'invocationId=', 'invocationId', 'waitSeconds=0', 'waitSeconds=60', 'waitSeconds=61', 'waitSeconds=-1', 'waitSeconds=1e1', 'responseContentType=text/plain', 'responseContentType=%%', '%', '='),
      fc.string({ unit: 'binary', maxLength: 20 }),
    ),
    { maxLength: 6 },
  )
  .map((parts) => parts.join('&'));

describe('parsePollQuery', () => {
  it('returns a poll with a wait from 0 to 60 s, or refuses with 400, for any query', () => {
    fc.assert(
      fc.property(queryText, fc.integer({ min: 0, max: MAX_WAIT_SECONDS }), (raw, defaultWait) => {
        const query = parse(raw);
        try {
          const poll = parsePollQuery(query, defaultWait);
          expect(poll.invocationId).toBe(query.invocationId);
          expect(Number.isInteger(poll.waitSeconds) && poll.waitSeconds >= 0 && poll.waitSeconds <= MAX_WAIT_SECONDS).toBe(true);
          expect(parseInvocationId(query)).toBe(poll.invocationId);
        } catch (error) {
          expect(error instanceof GiError && error.code === 'bad_request').toBe(true);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('reads back every wait a client may send', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), fc.integer({ min: 0, max: MAX_WAIT_SECONDS }), (id, wait) => {
        const raw = `invocationId=${encodeURIComponent(id)}&waitSeconds=${wait}`;
        expect(parsePollQuery(parse(raw), 20)).toEqual({ invocationId: id, waitSeconds: wait, responseContentType: undefined });
      }),
      { numRuns: 300 },
    );
  });
});

describe('ifNoneMatch', () => {
  it('never throws; a tag matches itself, weak or strong, alone or in a list, and * matches all', () => {
    const tag = fc.string({ unit: fc.constantFrom(...'abcXYZ019-_'.split('')), minLength: 1, maxLength: 22 }).map((t) => `"${t}"`);
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 100 }), tag, fc.array(tag, { maxLength: 3 }), (header, etag, others) => {
        ifNoneMatch(header, etag);
        expect(ifNoneMatch(etag, etag)).toBe(true);
        expect(ifNoneMatch(`W/${etag}`, etag)).toBe(true);
        expect(ifNoneMatch([...others, etag].join(', '), etag)).toBe(true);
        expect(ifNoneMatch('*', etag)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

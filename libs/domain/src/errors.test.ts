import { badRequest, GiError, notFound, payloadTooLarge, toGiError, unavailable, unsupportedMediaType } from './errors';

describe('domain errors', () => {
  it('carry a code, a title, a detail safe to show, and no extensions or headers unless given', () => {
    const error = new GiError('forbidden', 'Forbidden', 'not yours');
    expect(error).toBeInstanceOf(Error);
    expect([error.name, error.message, error.code, error.title, error.detail]).toEqual(['GiError', 'Forbidden: not yours', 'forbidden', 'Forbidden', 'not yours']);
    expect([error.extensions, error.headers]).toEqual([{}, {}]);
    const detailed = new GiError('rate_limited', 'Too many', 'slow down', { extensions: { limit: 5 }, headers: { 'Retry-After': '2' } });
    expect([detailed.extensions, detailed.headers]).toEqual([{ limit: 5 }, { 'Retry-After': '2' }]);
  });

  it('are made with the title of each code', () => {
    const made = [badRequest('a'), notFound('b'), payloadTooLarge('c'), unsupportedMediaType('d')].map((e) => [e.code, e.title, e.detail]);
    expect(made).toEqual([
      ['bad_request', 'Bad request', 'a'],
      ['not_found', 'Not found', 'b'],
      ['payload_too_large', 'Payload too large', 'c'],
      ['unsupported_media_type', 'Unsupported media type', 'd'],
    ]);
    expect(badRequest('x', { extensions: { field: 'y' } }).extensions).toEqual({ field: 'y' });
  });

  it('ask to retry an unavailable service after 5 s, or the seconds given', () => {
    const error = unavailable('the bus is down');
    expect([error.code, error.title, error.detail, error.headers]).toEqual(['unavailable', 'Service unavailable', 'the bus is down', { 'Retry-After': '5' }]);
    expect(unavailable('later', 30).headers).toEqual({ 'Retry-After': '30' });
  });

  it('give an invocation\'s recorded failure back with its id', () => {
    const error = toGiError({ code: 'timeout', title: 'Connector timed out', detail: 'within 3 s' }, 'inv-1');
    expect([error.code, error.title, error.detail, error.extensions]).toEqual(['timeout', 'Connector timed out', 'within 3 s', { invocationId: 'inv-1' }]);
  });
});

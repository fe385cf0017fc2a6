import { ErrorCodes, GiError } from '@gi/domain';
import { problemOf, STATUS_OF } from './problem-details';

describe('problem details', () => {
  it('maps every error code to a documented status', () => {
    expect(Object.keys(STATUS_OF).sort()).toEqual([...ErrorCodes].sort());
    expect(STATUS_OF.connector_error).toBe(422);
    expect(STATUS_OF.timeout).toBe(504);
  });

  it('renders RFC 9457 members and extensions, which cannot override them', () => {
    const error = new GiError('connector_error', 'Missing entity', 'The request entity is null', { extensions: { invocationId: 'i-1', status: 999 } });
    expect(problemOf(error)).toEqual({
      type: 'urn:gi:problem:connector-error',
      title: 'Missing entity',
      status: 422,
      detail: 'The request entity is null',
      invocationId: 'i-1',
    });
  });
});

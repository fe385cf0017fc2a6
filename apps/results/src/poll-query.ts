import { badRequest, parseResponseContentType } from '@gi/domain';

export const MAX_WAIT_SECONDS = 60;

export interface PollQuery {
  invocationId: string;
  waitSeconds: number;
  responseContentType?: string;
}

const single = (query: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const value = query[name];
  if (Array.isArray(value)) throw badRequest(`Query parameter '${name}' may be given only once.`);
  return value;
};

/** The invocation a poll or a cancellation is about. */
export function parseInvocationId(query: Record<string, string | string[] | undefined>): string {
  const invocationId = single(query, 'invocationId');
  if (!invocationId) throw badRequest("Query parameter 'invocationId' is required.");
  return invocationId;
}

/** Validates the query of GetGenericIntegrationResponse. */
export function parsePollQuery(query: Record<string, string | string[] | undefined>, defaultWaitSeconds: number): PollQuery {
  const invocationId = parseInvocationId(query);
  const waitText = single(query, 'waitSeconds');
  let waitSeconds = defaultWaitSeconds;
  if (waitText !== undefined) {
    if (!/^\d{1,4}$/.test(waitText) || Number(waitText) > MAX_WAIT_SECONDS) {
      throw badRequest(`'waitSeconds' must be a whole number from 0 to ${MAX_WAIT_SECONDS}.`);
    }
    waitSeconds = Number(waitText);
  }
  const type = single(query, 'responseContentType');
  return { invocationId, waitSeconds, responseContentType: type ? parseResponseContentType(type) : undefined };
}

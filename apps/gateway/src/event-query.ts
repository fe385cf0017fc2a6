import { badRequest, isValidEventName } from '@gi/domain';

export interface EventQuery {
  invocationId: string;
  name: string;
}

/** The longest invocation id a query may name (ids are UUIDs; anything longer names none). */
const MAX_INVOCATION_ID_CHARS = 128;

const single = (query: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const value = query[name];
  if (Array.isArray(value)) throw badRequest(`Query parameter '${name}' may be given only once.`);
  return value;
};

/** The query of GenericIntegrationEvent: the invocation the event is for and the event's name, each given once. */
export function parseEventQuery(query: Record<string, string | string[] | undefined>): EventQuery {
  const invocationId = single(query, 'invocationId');
  if (!invocationId || invocationId.length > MAX_INVOCATION_ID_CHARS) throw badRequest(`Query parameter 'invocationId' is required (at most ${MAX_INVOCATION_ID_CHARS} characters).`);
  const name = single(query, 'name');
  if (name === undefined || !isValidEventName(name)) {
    throw badRequest("Query parameter 'name' is required: the event name the run waits for (Context.WaitForEvent), 1 to 200 characters, no control characters.");
  }
  return { invocationId, name };
}

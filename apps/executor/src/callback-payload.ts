import { finalReply, GiError, isJsonMediaType } from '@gi/domain';
import type { Invocation, TerminalStatus } from '@gi/domain';
import { problemOf } from '@gi/http';

/**
 * The body POSTed to a callback URL (Standard Webhooks layout: type, timestamp, data). `data` holds the
 * invocation's id and status and what its poll answers: the rendered ResponseBody (`body`, parsed when
 * it is JSON, and its `contentType`), or the problem document of a failure or cancellation (`problem`).
 */
export function callbackPayload(invocation: Invocation & { status: TerminalStatus }) {
  const data: Record<string, unknown> = {
    invocationId: invocation.id,
    status: invocation.status,
    botId: invocation.botId,
    entityName: invocation.entityName,
    integrationId: invocation.integrationId,
  };
  try {
    const rendered = finalReply(invocation);
    data.contentType = rendered.contentType;
    data.body = isJsonMediaType(invocation.responseContentType) ? JSON.parse(rendered.payload) : rendered.payload;
  } catch (error) {
    if (!(error instanceof GiError)) throw error;
    data.problem = problemOf(error);
  }
  return {
    type: `invocation.${invocation.status.toLowerCase()}`,
    timestamp: new Date(invocation.finishedAt ?? invocation.createdAt).toISOString(),
    data,
  };
}

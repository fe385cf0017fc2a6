import type { Context } from 'koa';
import { GiError, unsupportedMediaType } from '@gi/domain';
import type { GatewayDeps } from './gateway.deps';
import { receiveFiles, uploadTooLarge } from './receive-files';
import type { ReceivedRequest } from './receive-files';

/**
 * Checks a GenericIntegrationFileTransfer call before any of its body is read (415 unless multipart,
 * 413 when its Content-Length is over the limit) and returns the reader that streams it into the
 * file store under the invocation id.
 */
export function fileTransferReader(ctx: Context, deps: GatewayDeps, botId: string): (invocationId: string) => Promise<ReceivedRequest> {
  if (!ctx.is('multipart/form-data')) throw unsupportedMediaType('GenericIntegrationFileTransfer takes multipart/form-data.');
  const uploads = deps.uploads;
  if (!uploads) throw new GiError('not_implemented', 'Not implemented', 'File uploads are not configured on this server.');
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > uploads.limits.maxUploadBytes) {
    throw uploadTooLarge(`The upload is larger than the limit of ${uploads.limits.maxUploadBytes} bytes (MAX_UPLOAD_SIZE).`);
  }
  return (invocationId) => receiveFiles(ctx.req, uploads, { botId, id: invocationId }, deps.logger);
}

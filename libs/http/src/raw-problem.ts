import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { GiError } from '@gi/domain';
import { problemOf } from './problem-details';

/**
 * Writes a problem document as a whole HTTP/1.1 reply straight to a connection, with `Connection:
 * close`, and ends it: for connections the app never sees (a request Node refused, a connection over
 * the limit). Returns the status sent.
 */
export function writeRawProblem(socket: Duplex, error: GiError): number {
  const problem = problemOf(error);
  const body = JSON.stringify(problem);
  const headers = Object.entries(error.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
      `Connection: close\r\nCache-Control: no-store\r\nX-Request-Id: ${randomUUID()}\r\n${headers}Content-Type: application/problem+json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return problem.status;
}

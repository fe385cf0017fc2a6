import type { ConnectorRunRequest, ConnectorRunResult, ConnectorRuntime } from '@gi/domain';

/** What a played run answers; by default a quick `{ ok: true }`. */
export type Play = (request: ConnectorRunRequest) => Promise<ConnectorRunResult>;

/** The connector runtime as the edge of the executor's tests: it keeps each request and answers with `play`. */
export class PlayedRuntime implements ConnectorRuntime {
  readonly runs: ConnectorRunRequest[] = [];
  play: Play = async () => ({ kind: 'ok', responseBody: { ok: true }, logs: [], durationMs: 1 });
  compile() {
    return { ok: true as const };
  }
  async run(request: ConnectorRunRequest) {
    this.runs.push(request);
    return this.play(request);
  }
  async close() {}
}

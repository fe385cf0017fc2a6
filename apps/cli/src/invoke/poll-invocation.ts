import { z } from 'zod';
import type { CliIo } from '../cli-io';
import { send, UnreachableError } from '../http-send';
import { ApiError, readProblem } from '../problem';
import type { PollState, ProgressIndicator } from '../progress-indicator';
import type { BotToken } from './bot-token';
import { withWait } from './public-api';

export interface FinalReply {
  status: number;
  contentType: string;
  text: string;
}

export interface PollOptions {
  url: string;
  token: BotToken;
  io: CliIo;
  indicator: ProgressIndicator;
  /** Long-poll hold asked of the service. */
  waitSeconds: number;
  /** Consecutive failures (unreachable, 503, 429) tolerated before giving up. */
  maxRetries?: number;
}

const MAX_PAUSE_MS = 10_000;

/**
 * Long-polls GetGenericIntegrationResponse until the invocation ends: resolves with the final reply
 * (200), throws ApiError with the service's problem when the run failed.
 */
export async function pollInvocation(options: PollOptions): Promise<FinalReply> {
  const { io, indicator, token } = options;
  const maxRetries = options.maxRetries ?? 5;
  const url = withWait(options.url, options.waitSeconds);
  let failures = 0;
  let renewed = false;

  for (;;) {
    const startedAt = io.now();
    let response: Response;
    try {
      response = await send(url, { headers: { authorization: `Bearer ${await token.get()}`, accept: '*/*' } });
    } catch (error) {
      if (!(error instanceof UnreachableError) || ++failures > maxRetries) throw error;
      indicator.note(`service unreachable, retry ${failures} of ${maxRetries}`);
      await io.sleep(backoff(failures));
      continue;
    }

    if (response.status === 200) {
      return { status: 200, contentType: response.headers.get('content-type') ?? '', text: await response.text() };
    }
    if (response.status === 202) {
      failures = 0;
      renewed = false;
      indicator.update(await readRunning(response));
      // A poll the service held for the full wait needs no pause; one answered early waits Retry-After.
      const heldMs = io.now() - startedAt;
      if (heldMs < options.waitSeconds * 1000 * 0.9) await io.sleep(retryAfterMs(response) ?? 1000);
      continue;
    }
    if (response.status === 401 && token.renewable && !renewed) {
      await response.arrayBuffer();
      renewed = true;
      indicator.note('token expired, minting a new one');
      await token.renew();
      continue;
    }
    const problem = await readProblem(response);
    if (isTransient(response) && ++failures <= maxRetries) {
      indicator.note(`${problem.title}, retry ${failures} of ${maxRetries}`);
      await io.sleep(retryAfterMs(response) ?? backoff(failures));
      continue;
    }
    throw new ApiError(problem);
  }
}

const runningSchema = z.looseObject({
  status: z.string().optional(),
  message: z.string().nullish(),
  progress: z.looseObject({ percent: z.number().optional(), message: z.string().nullish() }).nullish(),
});

/** The 202 status document: status, message and the progress the connector reported, if any. */
async function readRunning(response: Response): Promise<PollState> {
  const parsed = runningSchema.safeParse(await response.json().catch(() => null));
  if (!parsed.success) return { status: 'Running' };
  const { status, message, progress } = parsed.data;
  return { status: status ?? 'Running', percent: progress?.percent, message: progress?.message || message || undefined };
}

/** Service unavailable, rate limited, or a proxy in front of it failing: worth another try. */
function isTransient(response: Response): boolean {
  if (response.status === 503 || response.status === 429) return true;
  const isProblem = (response.headers.get('content-type') ?? '').includes('problem+json');
  return (response.status === 502 || response.status === 504) && !isProblem;
}

function retryAfterMs(response: Response): number | null {
  const header = response.headers.get('retry-after');
  if (header === null) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_PAUSE_MS);
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.min(Math.max(date - Date.now(), 0), MAX_PAUSE_MS);
}

const backoff = (failures: number) => Math.min(500 * 2 ** (failures - 1), MAX_PAUSE_MS);

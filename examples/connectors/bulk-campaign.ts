// The bulk campaign of bulk-campaign.js, in TypeScript: deploy it as it is (`gi connector deploy
// bulk-campaign.ts ...` bundles it), or copy it into a `gi connector init` project. A step per recipient
// (journalled: a crash, a deploy or a lost lease never sends to a recipient twice; its idempotencyKey lets
// the provider drop the one repeat a crash can cause), and a durable pause between batches that frees the
// executor. The integration must list the provider's host in allowedHosts (here: api.example.com).

interface Campaign {
  recipients: string[];
  text: string;
  apiBase?: string;
  /** Pause between two messages, in milliseconds. */
  pauseMs?: number;
  /** Recipients per batch; 0 for one batch. */
  batchSize?: number;
  /** Pause between batches: milliseconds, or text such as "1 hour". */
  batchPause?: number | string;
}

type Sent = { to: string; id: string } | { to: string; status: number };

const MAX_ATTEMPTS = 5;

const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError('Missing entity', 'The request entity is null');
const campaign = (entity.RequestBody ?? {}) as Partial<Campaign>;
const { recipients, text, apiBase = 'https://api.example.com', pauseMs = 200, batchSize = 0, batchPause = '1 minute' } = campaign;
if (!Array.isArray(recipients) || typeof text !== 'string') {
  Context.RaiseError('Invalid campaign', 'The body needs recipients (an array) and text (a string).');
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How long a 429 asks to wait: Retry-After in seconds or as an HTTP date; 1 s without it, at most 60 s. */
function retryAfterMs(response: Response): number {
  const value = response.headers.get('Retry-After');
  const ms = value === null ? 1000 : /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  return Math.min(Math.max(Number.isFinite(ms) ? ms : 1000, 0), 60_000);
}

/** Sends one message, the step's key with it; its id, or the status of the last refusal. */
async function send(to: string, { idempotencyKey }: StepRun): Promise<Sent> {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(`${apiBase}/messages`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey },
      body: JSON.stringify({ to, text }),
    });
    if (response.ok) return { to, id: ((await response.json()) as { id: string }).id };
    if (response.status !== 429 || attempt === MAX_ATTEMPTS) return { to, status: response.status };
    const ms = retryAfterMs(response);
    Context.Log(`429 for ${to}: waiting ${ms} ms (attempt ${attempt})`);
    await wait(ms);
  }
}

const results: Sent[] = [];
for (const [i, to] of recipients!.entries()) {
  if (batchSize > 0 && i > 0 && i % batchSize === 0) await Context.Sleep('batch pause', batchPause);
  else if (i > 0 && pauseMs > 0) await Context.Sleep('pause', pauseMs);
  results.push(await Context.Step('send', (step) => send(to, step)));
  Context.SetProgress(Math.round(((i + 1) / recipients!.length) * 100), `${i + 1} of ${recipients!.length} sent`);
}
const failed = results.filter((result): result is Extract<Sent, { status: number }> => 'status' in result);
entity.ResponseBody = { Status: 'Completed', Sent: results.length - failed.length, Failed: failed };
Context.SetResponseEntity(entity);

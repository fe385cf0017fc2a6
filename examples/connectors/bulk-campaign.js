// A bulk campaign (an async job that may run for hours): the provider takes one message per call, so
// send one call per recipient, retry a 429 after the time its Retry-After asks for, report progress
// to pollers, and reply with a summary. Call it with ?asyncResponse=true and poll.
//
// Each send is a durable step: its result is journalled, so a crash, a deploy or a lost lease never
// sends to a recipient twice, and the step's idempotencyKey goes to the provider, which drops a repeat
// of the one send that was in flight at a crash. After every `batchSize` recipients a durable pause
// (`batchPause`, e.g. "1 hour") frees the executor until the next batch; between two messages a short
// pause (`pauseMs`) keeps to the provider's pace.
// The integration must list the provider's host in allowedHosts (here: api.example.com).
const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");
const { recipients = [], text, apiBase = "https://api.example.com", pauseMs = 200, batchSize = 0, batchPause = "1 minute" } = entity.RequestBody || {};
if (!Array.isArray(recipients) || typeof text !== "string") {
  Context.RaiseError("Invalid campaign", "The body needs recipients (an array) and text (a string).");
}

const MAX_ATTEMPTS = 5;
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long a 429 asks to wait: Retry-After in seconds or as an HTTP date; 1 s without it, at most 60 s. */
function retryAfterMs(response) {
  const value = response.headers.get("Retry-After");
  const ms = value === null ? 1000 : /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  return Math.min(Math.max(Number.isFinite(ms) ? ms : 1000, 0), 60_000);
}

/** Sends one message, the step's key with it; its id, or the status of the last refusal. */
async function send(to, { idempotencyKey }) {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(`${apiBase}/messages`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Idempotency-Key": idempotencyKey },
      body: JSON.stringify({ to, text }),
    });
    if (response.ok) return { to, id: (await response.json()).id };
    if (response.status !== 429 || attempt === MAX_ATTEMPTS) return { to, status: response.status };
    const ms = retryAfterMs(response);
    Context.Log(`429 for ${to}: waiting ${ms} ms (attempt ${attempt})`);
    await wait(ms);
  }
}

const results = [];
for (const [i, to] of recipients.entries()) {
  if (batchSize > 0 && i > 0 && i % batchSize === 0) await Context.Sleep("batch pause", batchPause);
  else if (i > 0 && pauseMs > 0) await Context.Sleep("pause", pauseMs);
  // One step per recipient (the n-th "send" is the n-th recipient): sent at most once, answered from the journal on a re-run.
  results.push(await Context.Step("send", (step) => send(to, step)));
  Context.SetProgress(Math.round(((i + 1) / recipients.length) * 100), `${i + 1} of ${recipients.length} sent`);
}
const failed = results.filter((result) => result.status !== undefined);
entity.ResponseBody = { Status: "Completed", Sent: results.length - failed.length, Failed: failed };
Context.SetResponseEntity(entity);

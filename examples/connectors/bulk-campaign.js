// A bulk campaign (an async job): the provider takes one message per call, so send one call per
// recipient, pause between calls, retry a 429 after the time its Retry-After asks for, report
// progress to pollers, and reply with a summary. Call it with ?asyncResponse=true and poll.
// The integration must list the provider's host in allowedHosts (here: api.example.com).
const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");
const { recipients = [], text, apiBase = "https://api.example.com", pauseMs = 200 } = entity.RequestBody || {};
if (!Array.isArray(recipients) || typeof text !== "string") {
  Context.RaiseError("Invalid campaign", "The body needs recipients (an array) and text (a string).");
}

const MAX_ATTEMPTS = 5;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long a 429 asks to wait: Retry-After in seconds or as an HTTP date; 1 s without it, at most 60 s. */
function retryAfterMs(response) {
  const value = response.headers.get("Retry-After");
  const ms = value === null ? 1000 : /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  return Math.min(Math.max(Number.isFinite(ms) ? ms : 1000, 0), 60_000);
}

/** Sends one message; its id, or the status of the last refusal. */
async function send(to) {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(`${apiBase}/messages`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ to, text }),
    });
    if (response.ok) return { to, id: (await response.json()).id };
    if (response.status !== 429 || attempt === MAX_ATTEMPTS) return { to, status: response.status };
    const wait = retryAfterMs(response);
    Context.Log(`429 for ${to}: waiting ${wait} ms (attempt ${attempt})`);
    await sleep(wait);
  }
}

const results = [];
for (const [i, to] of recipients.entries()) {
  if (i > 0) await sleep(pauseMs);
  results.push(await send(to));
  Context.SetProgress(Math.round(((i + 1) / recipients.length) * 100), `${i + 1} of ${recipients.length} sent`);
}
const failed = results.filter((result) => result.status !== undefined);
entity.ResponseBody = { Status: "Completed", Sent: results.length - failed.length, Failed: failed };
Context.SetResponseEntity(entity);

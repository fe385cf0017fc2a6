// A receiver that checks the producer's signature (Standard Webhooks, as Svix, Stripe-style
// schemes do) over the body exactly as it was sent, and refuses the call with 422 when it does not
// match or is older than five minutes.
//   webhook-id, webhook-timestamp (seconds), webhook-signature: "v1,<base64>" (several, space separated)
//   signed content: `${id}.${timestamp}.${raw body}`, HMAC-SHA256 with the secret's bytes
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"; // placeholder: the producer's signing secret
const TOLERANCE_SECONDS = 300;

const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");
const headers = new URLSearchParams(entity.RequestHeaders);
const id = headers.get("webhook-id");
const timestamp = headers.get("webhook-timestamp");
const signatures = (headers.get("webhook-signature") || "").split(" ");
if (!id || !timestamp) Context.RaiseError("Unsigned call", "The webhook-id and webhook-timestamp headers are missing.");
if (Math.abs(Date.now() / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) {
  Context.RaiseError("Stale call", `The webhook-timestamp is more than ${TOLERANCE_SECONDS} seconds away from now.`);
}

const secret = Uint8Array.from(atob(SECRET.replace(/^whsec_/, "")), (c) => c.charCodeAt(0));
const key = await crypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
const content = new TextEncoder().encode(`${id}.${timestamp}.${Context.GetRawRequestBody()}`);
let verified = false;
for (const entry of signatures) {
  const [version, value] = entry.split(",");
  if (version !== "v1" || !value) continue;
  let bytes;
  try {
    bytes = Uint8Array.from(atob(value), (c) => c.charCodeAt(0));
  } catch {
    continue; // not base64: not a signature of ours
  }
  // verify compares in constant time.
  if (await crypto.subtle.verify("HMAC", key, bytes, content)) verified = true;
}
if (!verified) Context.RaiseError("Invalid signature", "No webhook-signature matches the body as sent.");

entity.ResponseBody = { Status: "Verified", Type: entity.RequestBody && entity.RequestBody.type };
Context.SetResponseEntity(entity);

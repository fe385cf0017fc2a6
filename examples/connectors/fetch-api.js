// Forward the order to a downstream API with fetch, as a Workers script would, and reply with what it answered.
// The integration must list the API's host in allowedHosts (here: api.example.com).
const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");

const apiBase = (entity.RequestBody && entity.RequestBody.apiBase) || "https://api.example.com";
const response = await fetch(`${apiBase}/orders`, {
  method: "POST",
  headers: { Accept: "application/json", "Content-Type": "application/json" },
  body: JSON.stringify({ orderId: entity.RequestBody.orderId }),
  signal: AbortSignal.timeout(10000),
});
if (!response.ok) {
  const text = await response.text();
  Context.RaiseError("Downstream error", `The order API answered ${response.status}: ${text.slice(0, 200)}`);
}
const answer = await response.json();
Context.Log("order API answered", response.status);
entity.ResponseBody = { Status: "Forwarded", Reference: answer.reference };
Context.SetResponseEntity(entity);

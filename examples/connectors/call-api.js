// Forward the order to a downstream API and reply with what it answered.
// The integration must list the API's host in allowedHosts (here: api.example.com).
const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");

const apiBase = (entity.RequestBody && entity.RequestBody.apiBase) || "https://api.example.com";
const response = await Context.Http.Request({
  method: "POST",
  url: `${apiBase}/orders`,
  headers: { Accept: "application/json" },
  body: { orderId: entity.RequestBody.orderId },
  timeoutMs: 10000,
});
if (response.status >= 400) {
  Context.RaiseError("Downstream error", `The order API answered ${response.status}: ${response.body.slice(0, 200)}`);
}
Context.Log("order API answered", response.status);
entity.ResponseBody = { Status: "Forwarded", Reference: response.json && response.json.reference };
Context.SetResponseEntity(entity);

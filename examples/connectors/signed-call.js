// A signed API call: the provider wants Basic auth and an HMAC-SHA256 signature of the timestamp
// and the body (X-Timestamp, X-Signature as hex), and the caller's X-Request-Id passed on.
// The integration must list the API's host in allowedHosts (here: api.example.com).
const API_USER = "acme";
const API_PASSWORD = "change-me"; // placeholder: the provider's password
const SIGNING_KEY = "change-me-too"; // placeholder: the provider's signing key

const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");
const headers = new URLSearchParams(entity.RequestHeaders); // "k=v&k2=v2", as the spec stores them
const query = new URLSearchParams(entity.RequestParams);
const apiBase = query.get("apiBase") || "https://api.example.com";

const body = JSON.stringify({ order: entity.RequestBody });
const timestamp = String(Math.floor(Date.now() / 1000));
const encoder = new TextEncoder();
const key = await crypto.subtle.importKey("raw", encoder.encode(SIGNING_KEY), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
const signature = await crypto.subtle.sign("HMAC", key, encoder.encode(`${timestamp}.${body}`));
const hex = Array.from(new Uint8Array(signature), (byte) => byte.toString(16).padStart(2, "0")).join("");

const url = new URL("/v1/orders", apiBase);
url.searchParams.set("source", query.get("source") || "webhook");
const response = await fetch(url, {
  method: "POST",
  headers: {
    Authorization: `Basic ${btoa(`${API_USER}:${API_PASSWORD}`)}`,
    "Content-Type": "application/json",
    "X-Timestamp": timestamp,
    "X-Signature": hex,
    "X-Request-Id": headers.get("X-Request-Id") || crypto.randomUUID(),
  },
  body,
});
if (!response.ok) Context.RaiseError("Downstream error", `The order API answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
entity.ResponseBody = { Status: "Forwarded", Reference: (await response.json()).reference };
Context.SetResponseEntity(entity);

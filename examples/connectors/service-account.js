// A service-account call (Google, Salesforce and others): sign a JWT with the account's RSA key
// (RS256), exchange it for an access token, and call the API with that token.
// The integration must list both hosts in allowedHosts (here: oauth2.example.com, api.example.com).
const SERVICE_ACCOUNT = "connector@acme.example.com";
// Placeholder: the account's private key as PEM (PKCS #8), "-----BEGIN PRIVATE KEY-----" and all.
const PRIVATE_KEY_PEM = "REPLACE_WITH_THE_SERVICE_ACCOUNT_PRIVATE_KEY";

const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");
const query = new URLSearchParams(entity.RequestParams);
const tokenUrl = query.get("tokenUrl") || "https://oauth2.example.com/token";
const apiBase = query.get("apiBase") || "https://api.example.com";

const base64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const encodeJson = (value) => base64url(new TextEncoder().encode(JSON.stringify(value)));

/** A signed JWT asserting the account, for the token endpoint. */
async function assertion() {
  const der = Uint8Array.from(atob(PRIVATE_KEY_PEM.replace(/-----[^-]+-----|\s/g, "")), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey("pkcs8", der, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]);
  const now = Math.floor(Date.now() / 1000);
  const unsigned = `${encodeJson({ alg: "RS256", typ: "JWT" })}.${encodeJson({ iss: SERVICE_ACCOUNT, scope: "orders.write", aud: tokenUrl, iat: now, exp: now + 3600 })}`;
  const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, new TextEncoder().encode(unsigned));
  return `${unsigned}.${base64url(signature)}`;
}

const grant = await fetch(tokenUrl, {
  method: "POST",
  body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: await assertion() }),
});
if (!grant.ok) Context.RaiseError("Not authorized", `The token endpoint answered ${grant.status}: ${(await grant.text()).slice(0, 200)}`);
const { access_token: accessToken } = await grant.json();

const response = await fetch(`${apiBase}/v1/orders`, {
  method: "POST",
  headers: { Authorization: `Bearer ${accessToken}`, "Content-Type": "application/json" },
  body: JSON.stringify(entity.RequestBody),
});
if (!response.ok) Context.RaiseError("Downstream error", `The order API answered ${response.status}`);
entity.ResponseBody = { Status: "Created", Order: await response.json() };
Context.SetResponseEntity(entity);

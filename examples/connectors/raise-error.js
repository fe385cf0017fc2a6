// Refuse a request that misses a required field: the caller gets 422 with this title and message.
const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");
const body = entity.RequestBody || {};
if (!body.email) Context.RaiseError("Invalid request", "The field 'email' is required.");
entity.ResponseBody = { Status: "Accepted", Message: `subscribed ${body.email}` };
Context.SetResponseEntity(entity);

// Acknowledge the webhook: reply with a status text and a message.
const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");
entity.ResponseBody = { Status: "Accepted", Message: `order ${entity.RequestBody.orderId}` };
Context.SetResponseEntity(entity);

// A long job: process recipients one at a time and report progress, shown to pollers while it runs.
const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");

const recipients = (entity.RequestBody && entity.RequestBody.recipients) || [];
const sent = [];
for (let i = 0; i < recipients.length; i++) {
  sent.push(recipients[i]);
  await null; // a real connector would await Context.Http.Request(...) here
  Context.SetProgress(Math.round(((i + 1) / recipients.length) * 100), `sent ${i + 1} of ${recipients.length}`);
}
entity.ResponseBody = { Status: "Completed", Sent: sent.length };
Context.SetResponseEntity(entity);

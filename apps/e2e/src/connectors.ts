import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './service-process';

/** Connector sources used by the end-to-end tests. */
export const example = (name: string) => readFileSync(join(ROOT, 'examples/connectors', `${name}.js`), 'utf8');

export const echo = `
const entity = Context.GetRequestEntity();
entity.ResponseBody = { params: entity.RequestParams, headers: entity.RequestHeaders, body: entity.RequestBody };
Context.SetResponseEntity(entity);
`;

/** Returns the request body itself as ResponseBody (a string stays a string). */
export const mirror = `
const entity = Context.GetRequestEntity();
entity.ResponseBody = entity.RequestBody;
Context.SetResponseEntity(entity);
`;

/** Busy for the number of milliseconds in the `ms` query parameter, then answers. */
export const busy = `
const entity = Context.GetRequestEntity();
const ms = Number(/(?:^|&)ms=(\\d+)/.exec(entity.RequestParams)?.[1] ?? 0);
const end = Date.now() + ms;
while (Date.now() < end) {}
entity.ResponseBody = { done: true, ms };
Context.SetResponseEntity(entity);
`;

export const raises = `Context.RaiseError("Order rejected", "Order 42 has no lines");`;
export const throws = `throw new Error("database password is hunter2");`;
export const loops = `while (true) {}`;

export { credentialHeadersOf, readInbound, SCHEME_RULES, signsBody } from './inbound-schemes';
export type { SignedInbound } from './inbound-schemes';
export type { InboundRequest } from './inbound-request';
export { inboundRefusal } from './inbound-refusal';
export type { InboundRefusalCode } from './inbound-refusal';

/** Outbound HTTP to addresses tenants choose: the SSRF guard and the callback sender built on it. */
export * from './egress-policy';
export * from './destination';
export * from './http-callback.sender';

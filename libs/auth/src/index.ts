export * from './bearer';
export * from './token.service';
export * from './webhook-signature';
export * from './secret-cipher';
export * from './secret-vault';
export * from './inbound/index';

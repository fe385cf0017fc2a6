export * from './bearer';
export * from './token.service';
export * from './webhook-signature';

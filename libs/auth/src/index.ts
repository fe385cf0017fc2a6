export * from './bearer';
export * from './token.service';

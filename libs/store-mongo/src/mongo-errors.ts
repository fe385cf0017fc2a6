import { MongoServerError } from 'mongodb';

/** E11000: the write would break a unique index (a reused invocation id, a version taken concurrently). */
export const isDuplicateKey = (error: unknown): boolean => error instanceof MongoServerError && error.code === 11000;

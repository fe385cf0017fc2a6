import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * Comma-separated IP addresses (`CONNECTOR_TRUSTED_ADDRESSES`, `CALLBACK_TRUSTED_ADDRESSES`); a spelling
 * no socket reads (127.1) would silently trust nothing, so it is refused.
 */
export const addressList = z
  .string()
  .transform((v) => v.split(',').map((address) => address.trim()))
  .refine((list) => list.every((address) => isIP(address) !== 0 && !address.includes('%')), 'comma-separated IP addresses such as 127.0.0.1 or ::1');

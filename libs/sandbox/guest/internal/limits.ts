/**
 * Limits of single calls of the globals whose work the host does (TextEncoder, TextDecoder, atob,
 * btoa): the host checks them, and the sandbox side checks them first so that an oversized string is
 * refused before it is copied out of the engine. A call of the host is not interrupted, so this
 * bounds the time a connector can spend outside its CPU-time limit's checks.
 */
export const MAX_UNITS_PER_CALL = 32 * 1024 * 1024;

/** The RangeError message of an input over MAX_UNITS_PER_CALL. */
export const tooLarge = (what: string, unit: string, hint: string) => `${what}: at most ${MAX_UNITS_PER_CALL / 1024 / 1024} Mi ${unit} per call; ${hint}.`;

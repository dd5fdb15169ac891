/** Imported once at start-up to learn whether this process can import `.ts` files (see context.ts). */
export const TS_PROBE = true;

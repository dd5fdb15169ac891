// The fold lives in @flowing/protocol (the studio runs the same one); this path stays for runtime/replay.ts.
export { sessionAt } from '@flowing/protocol';

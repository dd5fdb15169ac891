import { formatSpec } from '@flowing/spec';

/**
 * The spec hash the generator writes into a machine module (and the runtime into every session), computed in the
 * browser: SHA-256 of the canonical spec text without `layout` and `$schema`, as codegen's `specHash` does (a test
 * compares the two on every example machine). Moving a state on the canvas does not change it; any other edit does.
 * @example await browserSpecHash(spec) === header.specHash
 */
export async function browserSpecHash(spec: unknown): Promise<string> {
  const { layout: _layout, $schema: _schema, ...semantic } = (spec ?? {}) as Record<string, unknown>;
  const bytes = new TextEncoder().encode(formatSpec(semantic));
  const digest = await crypto.subtle.digest('SHA-256', bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

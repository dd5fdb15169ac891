/**
 * A migration hook, exported as `migrate` from a machine's hand-written `<id>.impl.ts`: how sessions recorded under an
 * older version of the machine are carried onto the current one. `states` renames state paths (dotted, as
 * `activeStatePaths` writes them; a compound state's rename carries its children); `context` turns the old context
 * into one the current context schema accepts.
 */
export interface MigrationHook<TOldContext = Record<string, unknown>, TNewContext = Record<string, unknown>> {
  /**
   * The spec hashes (or their first 12 or more characters) the hook applies to; omitted, it applies to any older
   * version. A session recorded under another version is left as it is.
   */
  fromVersion?: string | readonly string[];
  /** Old state path to new state path, e.g. `{ await_approval: 'await_manager' }`. */
  states?: Readonly<Record<string, string>>;
  /** The new context from the old one; it must validate against the current context schema. */
  context?: (old: TOldContext) => TNewContext;
}

export type AnyMigrationHook = MigrationHook<never, unknown>;

/**
 * Declares a migration hook with its context types checked.
 * @example
 * export const migrate = defineMigration<{ note?: string }, OrderSupportContext>({
 *   states: { await_approval: 'await_manager' },
 *   context: ({ note, ...rest }) => ({ ...rest, comment: note }),
 * });
 */
export function defineMigration<TOldContext = Record<string, unknown>, TNewContext = Record<string, unknown>>(
  hook: MigrationHook<TOldContext, TNewContext>,
): MigrationHook<TOldContext, TNewContext> {
  return Object.freeze({ ...hook });
}

const MIN_VERSION_PREFIX = 12;

/** True when the hook applies to sessions recorded under `specHash`. */
export function hookApplies(hook: AnyMigrationHook, specHash: string): boolean {
  if (hook.fromVersion === undefined) return true;
  const versions = typeof hook.fromVersion === 'string' ? [hook.fromVersion] : hook.fromVersion;
  return versions.some((v) => v === specHash || (v.length >= MIN_VERSION_PREFIX && specHash.startsWith(v)));
}

/** A state path after the hook's renames: the longest renamed prefix is replaced. */
export function renamePath(path: string, states: Readonly<Record<string, string>> | undefined): string {
  if (!states) return path;
  const segments = path.split('.');
  for (let n = segments.length; n > 0; n--) {
    const prefix = segments.slice(0, n).join('.');
    const renamed = Object.hasOwn(states, prefix) ? states[prefix] : undefined;
    if (renamed !== undefined) return [renamed, ...segments.slice(n)].join('.');
  }
  return path;
}

let registered: Promise<void> | undefined;

/**
 * Lets this process import the project's own TypeScript (machines/, tools/): the built CLI registers tsx's loader
 * once, before the first such import. Running from the sources, a TypeScript loader is already there.
 */
export function ensureTypeScriptLoader(): Promise<void> {
  if (import.meta.url.endsWith('.ts')) return Promise.resolve();
  registered ??= import('tsx/esm/api').then(({ register }) => {
    register();
  });
  return registered;
}

// The layer rules of DESIGN.md ("Layers and the direction of dependencies"), checked by `npm run lint`.
// Workspace packages resolve to their folders (`@flowing/spec` -> spec/index.ts) through the `@flowing/source` export
// condition, so a rule on `^runtime/` also catches `import ... from '@flowing/runtime'`. An import that cannot be resolved
// keeps its bare name, which is why the package patterns below match a bare name as well as a node_modules path.

/** A package (or a scope of packages) by name, resolved into node_modules or left unresolved. */
const pkg = (...names) => `(^|(^|/)node_modules/)(${names.join('|')})(/|$)`;

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'runtime-not-to-codegen-or-studio',
      comment: 'runtime/ is the engine a service installs alone: it never imports codegen/ or studio/.',
      severity: 'error',
      from: { path: '^runtime/' },
      to: { path: ['^(codegen|studio)/', pkg('@flowing/codegen', '@flowing/studio')] },
    },
    {
      name: 'runtime-not-to-ui-or-build-tools',
      comment: 'runtime/ runs on plain Node: no React, React Flow, Vite or ts-morph.',
      severity: 'error',
      from: { path: '^runtime/' },
      to: { path: pkg('react', 'react-dom', '@xyflow/[^/]+', 'vite', '@vitejs/[^/]+', 'ts-morph', '@ts-morph/[^/]+') },
    },
    {
      name: 'spec-is-the-leaf',
      comment:
        'spec/ is browser-safe and imported by every layer: it imports only itself, zod and its two pure parsers ' +
        '(jsep for expressions, jsonc-parser for spec files) — no Node builtins, no other @flowing package.',
      severity: 'error',
      from: { path: '^spec/' },
      to: { pathNot: ['^spec/', pkg('zod', 'jsep', 'jsonc-parser')] },
    },
    {
      name: 'codegen-not-to-runtime-or-studio',
      comment: 'codegen/ emits import strings for the runtime; it never imports runtime/ or studio/ code.',
      severity: 'error',
      from: { path: '^codegen/' },
      to: { path: ['^(runtime|studio)/', pkg('@flowing/runtime', '@flowing/studio')] },
    },
    {
      name: 'studio-app-not-to-node-layers',
      comment:
        'studio/src runs in the browser: it reaches codegen and the runtime over HTTP and imports no runtime/, codegen/, ' +
        'studio/server or other Node-side code; of the @flowing packages only @flowing/spec and @flowing/protocol.',
      severity: 'error',
      from: { path: '^studio/src/' },
      to: {
        path: ['^(runtime|codegen|studio/server|bin|tools|test|machines)/', pkg('@flowing/(?!spec|protocol)[^/]+')],
      },
    },
    {
      name: 'studio-app-not-to-node-builtins',
      comment: 'studio/src runs in the browser: no Node builtins.',
      severity: 'error',
      from: { path: '^studio/src/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'protocol-is-browser-safe',
      comment: 'protocol/ is the wire contract shared by runtime and studio: it imports only itself, spec/ and zod.',
      severity: 'error',
      from: { path: '^protocol/' },
      to: { pathNot: ['^(protocol|spec)/', pkg('zod')] },
    },
    {
      name: 'no-unresolvable',
      comment: 'An import that does not resolve would slip past the rules above.',
      severity: 'error',
      from: { path: '^(spec|runtime|codegen|studio|protocol)/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Build output (dist/ at the root and in each workspace) and run-time output; node_modules/*/dist stays in view.
    exclude: { path: '^((spec|runtime|codegen|studio|protocol)/)?dist/|^test/artifacts/|^\\.' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['@flowing/source', 'import', 'types', 'default'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    cache: false,
  },
};

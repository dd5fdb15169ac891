#!/usr/bin/env node
// Loads the TypeScript CLI through tsx, so the package needs no build step.
import { tsImport } from 'tsx/esm/api';

await tsImport('./cli.ts', import.meta.url);

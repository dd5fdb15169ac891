import { benchServe } from './serve.ts';

// `npm run bench:serve -- [options]`
process.exitCode = await benchServe(process.argv.slice(2));

import { childMain } from './child.ts';
import { runRound } from './round.ts';

// Child process entry of `npm run bench`: one round of every case.
childMain(runRound);

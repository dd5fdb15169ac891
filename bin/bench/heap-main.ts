import { childMain } from './child.ts';
import { measureHeap } from './heap.ts';

// Child process entry of `npm run bench`: heap retained per session, and one session's stored size.
childMain(measureHeap);

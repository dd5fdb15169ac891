import { childMain } from './child.ts';
import { measureIdleHeap } from './heap.ts';

// Child process entry of `npm run bench`: heap retained per idle session.
childMain((config: { count: number }) => measureIdleHeap(config.count));

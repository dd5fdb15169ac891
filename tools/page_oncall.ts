import { z } from 'zod';
import { defineTool } from '@flowing/runtime';

export const pageOncall = defineTool({
  name: 'page_oncall',
  description: 'Pages the on-call engineer of a service with a summary.',
  input: z.object({ service: z.string().min(1), summary: z.string() }),
  output: z.object({ pageId: z.string() }),
  timeoutMs: 5_000,
  idempotent: false,
  risk: 'medium',
  examples: [{ input: { service: 'checkout', summary: 'checkout: 14 errors' }, output: { pageId: 'P-checkout-000001' } }],
  errorExamples: [
    { input: { service: 'checkout', summary: '' }, error: { code: 'TOOL_FAILED', message: 'the pager service refused the page' } },
  ],
  async run({ service }, { idempotencyKey }) {
    return { pageId: `P-${service}-${idempotencyKey.slice(-6)}` };
  },
});

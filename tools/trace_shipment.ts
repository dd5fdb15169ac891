import { z } from 'zod';
import { defineTool, ToolError } from '@flowing/runtime';
import { DEMO_SHIPMENTS } from './fixtures.ts';

export const traceShipment = defineTool({
  name: 'trace_shipment',
  description: 'Asks the carrier where a shipped parcel is.',
  input: z.object({ tracking_number: z.string().min(1) }),
  output: z.object({ carrier: z.string(), location: z.string(), eta: z.string() }),
  timeoutMs: 5_000,
  idempotent: true,
  errors: { TRACKING_UNKNOWN: 'the carrier does not know this tracking number' },
  examples: [{ input: { tracking_number: 'TRK-88231' }, output: { carrier: 'Parcelo', location: 'Leipzig hub', eta: '2026-12-02' } }],
  errorExamples: [{ input: { tracking_number: 'TRK-0' }, error: { code: 'TRACKING_UNKNOWN', message: 'carrier does not know TRK-0' } }],
  async run({ tracking_number }) {
    const shipment = DEMO_SHIPMENTS[tracking_number];
    if (!shipment) throw new ToolError('TRACKING_UNKNOWN', `carrier does not know ${tracking_number}`);
    return shipment;
  },
});

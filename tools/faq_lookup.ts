import { z } from 'zod';
import { defineTool, ToolError } from '@flowing/runtime';
import { DEMO_FAQ } from './fixtures.ts';

export const faqLookup = defineTool({
  name: 'faq_lookup',
  description: "Looks up the shop's answer to a general question (shipping, returns, payment).",
  input: z.object({ question: z.string() }),
  output: z.object({ answer: z.string() }),
  timeoutMs: 2_000,
  idempotent: true,
  errors: { FAQ_EMPTY_QUESTION: 'the question is empty' },
  examples: [{ input: { question: 'How long does shipping take?' }, output: { answer: DEMO_FAQ.shipping!.answer } }],
  errorExamples: [{ input: { question: ' ' }, error: { code: 'FAQ_EMPTY_QUESTION', message: 'the question is empty' } }],
  async run({ question }) {
    const text = question.trim().toLowerCase();
    if (text === '') throw new ToolError('FAQ_EMPTY_QUESTION', 'the question is empty');
    const hit = Object.values(DEMO_FAQ).find((entry) => entry.keywords.some((keyword) => text.includes(keyword)));
    return { answer: hit?.answer ?? 'There is no answer to that in the FAQ.' };
  },
});

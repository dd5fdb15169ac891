import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from './fake-openai.ts';

/**
 * One fake OpenAI-compatible server for the test file: started before its tests, closed after them; after each test
 * no scripted answer is left and the requests are cleared. `pairing` also fails a test whose requests broke the
 * pairing of tool calls and their results.
 * @example const fake = useFakeOpenAI({ pairing: true }); it('…', () => fake().script(…));
 */
export function useFakeOpenAI(options: { pairing?: boolean } = {}): () => FakeOpenAI {
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });
  afterAll(async () => {
    await fake.close();
  });
  afterEach(() => {
    expect(fake.pending()).toBe(0);
    if (options.pairing) expect(fake.requests.filter((r) => r.pairingError)).toEqual([]);
    fake.requests.length = 0;
  });
  return () => fake;
}

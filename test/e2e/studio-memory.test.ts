// Conversation memory in the studio, in Chromium at two screen sizes: a model call's history picked from the
// machine's conversation fields, its memory edited in the side panel, a bad value shown at its field with its code
// and pointer, the memory line on the call block, and the saved spec accepted by `flowing validate`.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliArgs } from '../helpers/cli.ts';
import { startStudioServer } from '../helpers/studio-server.ts';
import { launchChromium, openPage, screenshot } from './browser.ts';

const run = promisify(execFile);
const FILE = 'machines/support-orders/support-orders.flow.json';
const STATE = 'extract_order_id';
const AT = `/states/${STATE}/invoke`;

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** The problems shown under the side panel's fields, as `code pointer`. */
const fieldProblems = (page: Page) =>
  page
    .locator('[data-testid=memory-editor] [data-testid=field-problem], [data-testid=invoke-editor] > [data-testid=field-problem]')
    .evaluateAll((els) => els.map((el) => `${(el as HTMLElement).dataset.code} ${(el as HTMLElement).dataset.path}`));

/** The problem shown right after a field, read from the field's own test id. */
const problemAfter = (page: Page, testId: string) =>
  page
    .locator(`.field:has([data-testid=${testId}]) + [data-testid=field-problem]`)
    .evaluateAll((els) => els.map((el) => `${(el as HTMLElement).dataset.code} ${(el as HTMLElement).dataset.path} ${el.textContent}`));

describe('conversation memory in the studio', () => {
  for (const viewport of [
    { width: 1440, height: 900 },
    { width: 1280, height: 800 },
  ]) {
    it(`sets a call's history and memory in the panel and saves a spec validation accepts (${viewport.width}x${viewport.height})`, async () => {
      const studio = await startStudioServer();
      const { page, errors } = await openPage(browser);
      try {
        await page.setViewportSize(viewport);
        await page.goto(studio.url);
        await page.locator('[data-testid=machine-select] option[value="support-orders"]').waitFor({ state: 'attached' });
        await page.selectOption('[data-testid=machine-select]', 'support-orders');
        await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });
        await page.click(`[data-testid=state-${STATE}] .state-node__name`);
        await page.locator('[data-testid=state-panel]').waitFor();

        // History: the machine's conversation field, or none; the block says what the call reads.
        expect(
          await page.locator('[data-testid=llm-history] option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
        ).toEqual(['', 'context.conversation']);
        expect(await page.locator(`[data-testid=memory-${STATE}]`).count()).toBe(0);
        // Memory without a history: the block says so and the validator's problem is at the memory field.
        await page.check('[data-testid=memory-enabled]');
        await expect.poll(() => page.locator(`[data-testid=memory-${STATE}]`).textContent()).toBe('memory: no history · last 8');
        await expect.poll(() => fieldProblems(page)).toEqual([`SPEC_MEMORY_WITHOUT_HISTORY ${AT}/memory`]);
        await page.uncheck('[data-testid=memory-enabled]');
        await expect.poll(() => page.locator(`[data-testid=memory-${STATE}]`).count()).toBe(0);
        await expect.poll(() => fieldProblems(page)).toEqual([]);
        await page.selectOption('[data-testid=llm-history]', 'context.conversation');
        await expect.poll(() => page.locator(`[data-testid=memory-${STATE}]`).textContent()).toBe('memory: conversation · all turns');

        // Memory: a window, a prompt limit, summaries keeping two facts (typed key by key: the comma must survive).
        await page.check('[data-testid=memory-enabled]');
        await page.fill('[data-testid=memory-window]', '6');
        await page.fill('[data-testid=memory-max-prompt-tokens]', '3000');
        await page.check('[data-testid=memory-summarize]');
        await page.fill('[data-testid=memory-summarize-after]', '12');
        await page.locator('[data-testid=memory-keep]').pressSequentially('orderId, request');
        expect(await page.inputValue('[data-testid=memory-keep]')).toBe('orderId, request');
        // Names and typed fields are two forms of the same facts: switching there and back keeps them.
        await page.selectOption('[data-testid=memory-keep-form]', 'typed');
        await expect
          .poll(() =>
            page
              .locator('[data-testid=memory-keep-fields] [aria-label="field name"]')
              .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value)),
          )
          .toEqual(['orderId', 'request']);
        await page.selectOption('[data-testid=memory-keep-form]', 'names');
        await expect.poll(() => page.inputValue('[data-testid=memory-keep]')).toBe('orderId, request');
        await page.fill('[data-testid=memory-pattern-orderId]', '\\b([A-Z][0-9]{4})\\b');
        await expect
          .poll(() => page.locator(`[data-testid=memory-${STATE}]`).textContent())
          .toBe('memory: conversation · last 6 · summary');

        // A bad value: the problem is shown at its field with its code and pointer, and in the problems list.
        await page.fill('[data-testid=memory-window]', 'six');
        await expect
          .poll(() => problemAfter(page, 'memory-window'))
          .toEqual([`SPEC_SCHEMA ${AT}/memory/window Invalid input: expected number, received string SPEC_SCHEMA at ${AT}/memory/window`]);
        expect(await fieldProblems(page)).toEqual([`SPEC_SCHEMA ${AT}/memory/window`]);
        expect(await page.locator(`[data-testid=problem-item][data-code=SPEC_SCHEMA]`).textContent()).toContain(`${AT}/memory/window`);
        await screenshot(page, `studio-memory-bad-window-${viewport.width}`);
        // A window the summary threshold is not above: the validator's own check, at the threshold's field.
        await page.fill('[data-testid=memory-window]', '12');
        await expect.poll(() => fieldProblems(page)).toEqual([`SPEC_INVALID_MEMORY ${AT}/memory/summarize/after`]);
        expect((await problemAfter(page, 'memory-summarize-after'))[0]).toContain('must be greater than window (12)');
        await page.fill('[data-testid=memory-window]', '6');
        await expect.poll(() => fieldProblems(page)).toEqual([]);

        // The line fits inside its state, under the badges.
        const line = await page.locator(`[data-testid=memory-${STATE}]`).boundingBox();
        const node = await page.locator(`[data-testid=state-${STATE}]`).boundingBox();
        const badges = await page.locator(`[data-testid=contract-${STATE}]`).boundingBox();
        expect(line && node && badges).toBeTruthy();
        expect(line!.y).toBeGreaterThanOrEqual(badges!.y + badges!.height - 0.5);
        expect(line!.y + line!.height).toBeLessThanOrEqual(node!.y + node!.height);
        expect(line!.x + line!.width).toBeLessThanOrEqual(node!.x + node!.width);
        // The settings are never cut; a long conversation name may be.
        const settings = page.locator(`[data-testid=memory-${STATE}] .invoke-block__memory-settings`);
        expect(
          await settings.evaluate((el) => el.getBoundingClientRect().right <= el.parentElement!.getBoundingClientRect().right + 0.5),
        ).toBe(true);
        expect(await page.locator(`[data-testid=memory-${STATE}]`).evaluate((el) => el.scrollHeight <= el.clientHeight)).toBe(true);
        await screenshot(page, `studio-memory-${viewport.width}`);

        await page.click('[data-testid=save]');
        await expect.poll(() => page.locator('[data-testid=dirty-flag]').textContent(), { timeout: 30_000 }).toBe('saved');
        const saved = JSON.parse(await readFile(join(studio.rootDir, FILE), 'utf8'));
        const invoke = saved.states[STATE].invoke;
        expect(invoke.history).toBe('context.conversation');
        expect(invoke.memory).toEqual({
          window: 6,
          maxPromptTokens: 3000,
          summarize: { after: 12, keep: ['orderId', 'request'], scripted: { patterns: { orderId: '\\b([A-Z][0-9]{4})\\b' } } },
        });
        const check = await run(process.execPath, cliArgs('validate', FILE), { cwd: studio.rootDir }).then(
          (r) => ({ code: 0, out: r.stdout + r.stderr }),
          (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
        );
        expect(check.out && check.code, check.out).toBe(0);
        expect(errors).toEqual([]);
      } finally {
        await page.context().close();
        await studio.close();
      }
    }, 120_000);
  }
});

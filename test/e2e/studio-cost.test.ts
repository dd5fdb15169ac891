// The cost bound in the studio, in Chromium: the machine's bound in the toolbar, the cost panel, a bound on each
// invoke block, and a budget the machine goes over in the problems list.
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editJsonFile } from '../helpers/project.ts';
import { startStudioServer } from '../helpers/studio-server.ts';
import { launchChromium, openPage, screenshot } from './browser.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('cost bound in the studio', () => {
  it('shows the bound per turn, per path and per invoke, and a budget it exceeds as a problem', async () => {
    const studio = await startStudioServer();
    await editJsonFile(join(studio.rootDir, 'machines/order-support/order-support.flow.json'), (spec) => {
      spec.budget = { modelCalls: 6 };
    });
    const { page, errors } = await openPage(browser);
    try {
      await page.goto(studio.url);
      await page.locator('[data-testid=machine-select] option[value="order-support"]').waitFor({ state: 'attached' });
      await page.selectOption('[data-testid=machine-select]', 'order-support');
      await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });

      // classify + extract (3 requests each) + compose_reply; resolve_user, query_order and trace_shipment 3 attempts each.
      await expect.poll(() => page.locator('[data-testid=cost-button]').textContent()).toBe('≤ 7 model · 9 tool / turn');
      expect(await page.locator('[data-testid=cost-classify]').textContent()).toBe('≤ 3 model');
      expect(await page.locator('[data-testid=cost-fetch_order]').textContent()).toBe('≤ 3 tool');
      // issue_refund is not idempotent: never retried.
      expect(await page.locator('[data-testid=cost-refund]').textContent()).toBe('≤ 1 tool');

      await page.click('[data-testid=cost-button]');
      await page.locator('[data-testid=cost-panel]').waitFor();
      expect(await page.locator('[data-testid=cost-maximum]').textContent()).toBe(
        'Maximum: 7 model · 9 tool calls per turn; 13 model · 15 tool calls per path.',
      );
      expect(await page.locator('[data-testid=cost-turns] tr').count()).toBe(20);
      await screenshot(page, 'cost-panel');

      const budget = page.locator('[data-testid=problem-item][data-code=SPEC_BUDGET_EXCEEDED]');
      await expect.poll(() => budget.count()).toBe(1);
      expect(await budget.textContent()).toContain('makes up to 7 model calls; the budget allows 6 per turn');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      await studio.close();
    }
  });
});

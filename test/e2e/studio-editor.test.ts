import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStudioServer, type StudioTestServer } from '../helpers/studio-server.ts';
import { drag, launchChromium, openPage, screenshot, zoomOutUntilVisible } from './browser.ts';
import { cliArgs } from '../helpers/cli.ts';

const run = promisify(execFile);

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

async function openMachine(page: Page, studio: StudioTestServer, id: string) {
  await page.goto(studio.url);
  await page.locator(`[data-testid=machine-select] option[value="${id}"]`).waitFor({ state: 'attached' });
  await page.selectOption('[data-testid=machine-select]', id);
  await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });
}

const fitView = (page: Page) => page.click('.react-flow__controls-fitview');

describe('studio graph editor in Chromium', () => {
  it('adds a state, connects a guarded transition, binds a tool, saves and generates code that passes codegen --check', async () => {
    const studio = await startStudioServer();
    const { page, errors } = await openPage(browser);
    try {
      await openMachine(page, studio, 'order-support');
      await screenshot(page, 'e2e-1-opened');

      // Add a state from the toolbar and rename it.
      await page.click('[data-testid=add-state]');
      await page.locator('[data-testid=state-panel]').waitFor();
      await page.fill('[data-testid=state-name-input]', 'check_status');
      await page.press('[data-testid=state-name-input]', 'Enter');
      await page.locator('[data-testid=state-check_status]').waitFor();

      // Bind a tool with input mappings and outcomes.
      await page.selectOption('[data-testid=invoke-kind]', 'tool');
      await page.click('[data-testid=tool-option-query_order]');
      await page.fill('[data-testid=input-mapping-order_id]', "context.orderId ?? ''");
      await page.fill('[data-testid=input-mapping-customer_id]', "context.customer.id ?? ''");
      await page.selectOption('[data-testid=invoke-ondone-target]', 'compose_reply');
      await page.selectOption('[data-testid=invoke-onerror-target]', 'failed');
      await expect.poll(() => page.locator('[data-testid=invoke-check_status]').textContent()).toContain('query_order');

      // Connect idle -> check_status by dragging between handles; name the event; add a guard.
      await page.keyboard.press('Escape');
      await fitView(page);
      // Fit-view keeps labels legible and lets a large machine scroll: zoom out to see both ends of the drag.
      const ends = ['[data-testid=state-idle] .react-flow__handle.source', '[data-testid=state-check_status] .react-flow__handle.target'];
      await zoomOutUntilVisible(page, ends);
      await drag(page, ends[0]!, ends[1]!);
      await page.locator('[data-testid=connect-dialog]').waitFor();
      await page.fill('[data-testid=connect-value]', 'CHECK');
      await page.press('[data-testid=connect-value]', 'Enter');
      await page.locator('[data-testid=transition-panel]').waitFor();
      await page.fill('[data-testid=transition-guard]', 'context.orderId != undefined');
      await expect
        .poll(() => page.locator('[data-testid=edge-idle-on-CHECK-0]').getAttribute('data-full-label'))
        .toBe('CHECK [context.orderId != undefined]');
      await screenshot(page, 'e2e-1-edited');

      // Save, then generate.
      await page.click('[data-testid=save]');
      await expect.poll(() => page.locator('[data-testid=dirty-flag]').textContent(), { timeout: 30_000 }).toBe('saved');
      await page.click('[data-testid=generate]');
      await page.locator('[data-testid=generated-view]').waitFor({ timeout: 60_000 });
      await page.click('[data-testid=generated-mode-code]');
      await expect.poll(() => page.locator('[data-testid=generated-code]').textContent(), { timeout: 30_000 }).toContain('check_status');
      await screenshot(page, 'e2e-1-generated');

      const spec = JSON.parse(await readFile(join(studio.rootDir, 'machines/order-support/order-support.flow.json'), 'utf8'));
      expect(spec.states.check_status.invoke).toEqual({
        tool: 'query_order',
        input: { order_id: "context.orderId ?? ''", customer_id: "context.customer.id ?? ''" },
        onDone: 'compose_reply',
        onError: 'failed',
      });
      expect(spec.states.active.states.idle.on.CHECK).toEqual({ target: 'check_status', guard: 'context.orderId != undefined' });
      expect(spec.events.CHECK).toEqual({});
      expect(spec.layout.check_status).toMatchObject({ x: expect.any(Number), y: expect.any(Number) });
      const machine = await readFile(join(studio.rootDir, 'machines/order-support/order-support.machine.ts'), 'utf8');
      expect(machine).toMatch(/check_status: \{[\s\S]*?src: "tool\.query_order"/);
      expect(machine).toContain('{ type: "CHECK" }');

      const check = await run(process.execPath, cliArgs('codegen', '--check'), { cwd: studio.rootDir }).then(
        (r) => ({ code: 0, out: r.stdout + r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
      );
      expect(check.out && check.code, check.out).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 180_000);

  it('shows the error badge on the edge whose guard has a typo after Generate', async () => {
    const studio = await startStudioServer();
    const { page, errors } = await openPage(browser);
    try {
      await openMachine(page, studio, 'order-support');
      const label = '[data-testid="edge-fetch_order-onDone-0"]';
      await zoomOutUntilVisible(page, [label]);
      await page.click(label);
      await page.locator('[data-testid=transition-panel]').waitFor();
      await page.fill('[data-testid=transition-guard]', "context.intnet == 'refund'");
      await expect.poll(() => page.locator(label).textContent()).toContain('context.intnet');
      await page.click('[data-testid=generate]');
      await page.locator('[data-testid=generated-view]').waitFor({ timeout: 120_000 });
      await page.click('[data-testid=generated-close]');
      await page.locator('[data-testid="badge-edge-fetch_order-onDone-0"]').waitFor();
      const problem = page.locator('[data-testid=problem-item][data-code=CODEGEN_TYPE_ERROR]').first();
      await expect.poll(() => problem.textContent()).toContain('intnet');
      await problem.click();
      await page.locator('[data-testid=transition-panel]').waitFor();
      expect(await page.inputValue('[data-testid=transition-guard]')).toBe("context.intnet == 'refund'");
      await screenshot(page, 'e2e-2-guard-typo');
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 180_000);
});

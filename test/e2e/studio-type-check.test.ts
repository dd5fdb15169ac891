import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliArgs } from '../helpers/cli.ts';
import { startStudioServer, type StudioTestServer } from '../helpers/studio-server.ts';
import { launchChromium, openPage, screenshot, zoomOutUntilVisible } from './browser.ts';

const run = promisify(execFile);
const SPEC = 'machines/order-support/order-support.flow.json';
const EDGE = '[data-testid="edge-await_approval-on-REJECT-0"]';
const BADGE = '[data-testid="badge-edge-await_approval-on-REJECT-0"]';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

async function openOrderSupport(page: Page, studio: StudioTestServer) {
  await page.goto(studio.url);
  await page.locator('[data-testid=machine-select] option[value="order-support"]').waitFor({ state: 'attached' });
  await page.selectOption('[data-testid=machine-select]', 'order-support');
  await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });
}

/** Answers of the live type check, as the page receives them. */
const nextCheck = (page: Page) =>
  page.waitForResponse((r) => r.url().endsWith('/api/machines/order-support/check'), { timeout: 150_000 }).then((r) => r.json());

/**
 * Records in the page when the last key went down and when `selector` is first there while the problems panel names
 * `text` (a pause mid-typing may show the error of a partial expression first; that one does not count).
 */
function watchKeystrokeToError(page: Page, selector: string, text: string) {
  return page.evaluate(
    ({ selector, text }) => {
      const w = window as unknown as { lastKey: number; shownAt: number | undefined };
      w.lastKey = 0;
      w.shownAt = undefined;
      // Each edit clears the type errors until its check answers, so the first showing after the last key is its answer.
      document.addEventListener(
        'keydown',
        () => {
          w.lastKey = performance.now();
          w.shownAt = undefined;
        },
        true,
      );
      new MutationObserver(() => {
        const panel = document.querySelector('[data-testid=problems-panel]')?.textContent ?? '';
        if (w.shownAt !== undefined || !document.querySelector(selector) || !panel.includes(text)) return;
        w.shownAt = performance.now();
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    },
    { selector, text },
  );
}

describe('type errors as you type, in Chromium', () => {
  it('shows a typo in a guard at its edge and in the problems panel without Generate; Generate then refuses and nothing drifts', async () => {
    const studio = await startStudioServer();
    const { page, errors } = await openPage(browser);
    try {
      await openOrderSupport(page, studio);
      const specBefore = await readFile(join(studio.rootDir, SPEC), 'utf8');
      await zoomOutUntilVisible(page, [EDGE]);
      await page.click(EDGE);
      await page.locator('[data-testid=transition-panel]').waitFor();
      // A first, correct guard: its check is the cold one (it loads the checker on the server).
      const cold = nextCheck(page);
      await page.fill('[data-testid=transition-guard]', "event.reason == 'x'");
      expect(await cold).toMatchObject({ typeChecked: true, problems: [] });
      await page.click('[data-testid=transition-guard]');
      await page.keyboard.press('ControlOrMeta+A');
      await watchKeystrokeToError(page, BADGE, "Property 'orderd' does not exist");
      await page.keyboard.type("event.orderd == 'x'", { delay: 30 });

      // Generous for a loaded machine; the figure that matters is the one logged below.
      await page.waitForFunction(() => (window as unknown as { shownAt?: number }).shownAt !== undefined, undefined, {
        timeout: 120_000,
      });
      const { lastKey, shownAt } = await page.evaluate(() => {
        const w = window as unknown as { lastKey: number; shownAt: number };
        return { lastKey: w.lastKey, shownAt: w.shownAt };
      });
      expect(shownAt).toBeGreaterThan(lastKey);
      const problem = page.locator('[data-testid=problem-item][data-code=CODEGEN_TYPE_ERROR]');
      await expect.poll(() => problem.textContent()).toContain("Property 'orderd' does not exist");
      expect(await problem.textContent()).toContain('/states/active/states/await_approval/on/REJECT/guard');
      console.log(`[type-check] last keystroke to the error badge on the edge: ${Math.round(shownAt - lastKey)} ms`);
      await screenshot(page, 'type-check-1-typo');

      // Generate with the type error: refused, the edit stays unsaved, spec and code on disk unchanged.
      await page.click('[data-testid=generate]');
      await expect.poll(() => page.locator('[data-testid=notice]').textContent(), { timeout: 60_000 }).toContain('Generate refused');
      expect(await page.locator('[data-testid=dirty-flag]').textContent()).not.toBe('saved');
      expect(await readFile(join(studio.rootDir, SPEC), 'utf8')).toBe(specBefore);
      const check = await run(process.execPath, cliArgs('codegen', '--check'), { cwd: studio.rootDir });
      expect(check.stdout).toMatch(/generated code is up to date/);

      // Fixing the typo clears the error at the edge, again without Generate.
      await page.fill('[data-testid=transition-guard]', "event.reason == 'x'");
      await page.locator(BADGE).waitFor({ state: 'detached', timeout: 30_000 });
      expect(await problem.count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 400_000);
});

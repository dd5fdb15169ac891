import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowSpec, StateSpec } from '../../spec/index.ts';
import { startStudioServer } from '../helpers/studio-server.ts';
import { ARTIFACTS_DIR, launchChromium, openPage, screenshot } from './browser.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** A machine of `groups` compound states with `perGroup` children each (groups * (perGroup + 1) states), without layout. */
function bigMachine(groups: number, perGroup: number): FlowSpec {
  const states: Record<string, StateSpec> = {};
  for (let g = 0; g < groups; g++) {
    const children: Record<string, StateSpec> = {};
    for (let c = 0; c < perGroup; c++) {
      const next = c + 1 < perGroup ? `s${g}_${c + 1}` : `s${(g + 1) % groups}_0`;
      children[`s${g}_${c}`] = {
        tags: c % 3 === 0 ? ['waiting'] : undefined,
        on: {
          NEXT: next,
          ...(c > 0 ? { BACK: { target: `s${g}_${c - 1}`, guard: 'context.n > 0', assign: { n: 'context.n - 1' } } } : {}),
        },
      };
    }
    states[`group_${g}`] = { initial: `s${g}_0`, states: children, on: { RESET: 's0_0' } };
  }
  return JSON.parse(
    JSON.stringify({
      specVersion: 1,
      id: 'big-300',
      context: { n: { type: 'number', default: 0 } },
      events: { NEXT: {}, BACK: {}, RESET: {} },
      initial: 'group_0',
      states,
    }),
  );
}

async function measure(page: Page, name: string): Promise<number> {
  return page.evaluate((n) => {
    const entries = performance.getEntriesByName(n, 'measure');
    return entries[entries.length - 1]?.duration ?? -1;
  }, name);
}

describe('studio figures (Performance API marks in Chromium)', () => {
  it('measures opening and laying out a 300-state machine, and Save+Generate on the examples', async () => {
    const studio = await startStudioServer();
    const { page, errors } = await openPage(browser);
    const figures: Record<string, number> = {};
    try {
      const spec = bigMachine(30, 9);
      await mkdir(join(studio.rootDir, 'machines/big-300'), { recursive: true });
      await writeFile(join(studio.rootDir, 'machines/big-300/big-300.flow.json'), JSON.stringify(spec, null, 2) + '\n');

      await page.goto(studio.url);
      for (const id of ['order-support', 'big-300']) {
        await page.locator(`[data-testid=machine-select] option[value="${id}"]`).waitFor({ state: 'attached' });
      }
      // Warm the dev server's module graph (elkjs) once, then measure a fresh open of the big machine.
      await page.selectOption('[data-testid=machine-select]', 'order-support');
      await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 60_000 });
      for (let run = 1; run <= 2; run++) {
        await page.evaluate(() => {
          delete document.body.dataset.canvasReady;
          performance.clearMeasures();
          performance.clearMarks();
        });
        await page.selectOption('[data-testid=machine-select]', run === 1 ? 'big-300' : 'order-support');
        if (run === 2) {
          await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 60_000 });
          await page.evaluate(() => {
            delete document.body.dataset.canvasReady;
            performance.clearMeasures();
            performance.clearMarks();
          });
          await page.selectOption('[data-testid=machine-select]', 'big-300');
        }
        await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 120_000 });
        figures[`open300_run${run}_ms`] = await measure(page, 'flowing:open');
        // Only states in view are rendered on a machine this large; the minimap draws every one.
        expect(await page.locator('.react-flow__minimap-node').count()).toBe(300);
      }
      await screenshot(page, 'perf-300-states');

      for (const id of ['order-support', 'incident-triage']) {
        await page.evaluate(() => {
          delete document.body.dataset.canvasReady;
        });
        await page.selectOption('[data-testid=machine-select]', id);
        await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 60_000 });
        for (let run = 1; run <= 2; run++) {
          // An edit, so that Generate saves first: Save+Generate in one click.
          await page.click('[data-testid=machine-settings]');
          await page.locator('[data-testid=machine-panel] textarea').first().fill(`Edited for the timing run ${run}.`);
          await page.evaluate(() => {
            performance.clearMeasures();
          });
          await page.click('[data-testid=generate]');
          await page.waitForFunction(() => performance.getEntriesByName('flowing:generate', 'measure').length > 0, undefined, {
            timeout: 120_000,
          });
          figures[`saveGenerate_${id}_run${run}_ms`] = await measure(page, 'flowing:generate');
          await page.click('[data-testid=generated-close]');
        }
      }
      for (const [name, value] of Object.entries(figures)) expect(value, name).toBeGreaterThan(0);
      await mkdir(ARTIFACTS_DIR, { recursive: true });
      await writeFile(join(ARTIFACTS_DIR, 'studio-figures.json'), JSON.stringify(figures, null, 2) + '\n');
      console.log(
        'studio figures (ms):',
        JSON.stringify(figures, (_k, v) => (typeof v === 'number' ? Math.round(v) : v)),
      );
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 400_000);
});

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStudioServer } from '../helpers/studio-server.ts';
import { ARTIFACTS_DIR, launchChromium, openPage, screenshot } from './browser.ts';
import { countStates, generatedMachine } from './graph-machines.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** Durations of every Performance API measure of that name, in ms. */
const measures = (page: Page, name: string) =>
  page.evaluate((n) => performance.getEntriesByName(n, 'measure').map((e) => e.duration), name);

function summary(values: number[]): { n: number; median: number; p95: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 10) / 10;
  return { n: sorted.length, median: at(0.5), p95: at(0.95), max: Math.round(sorted[sorted.length - 1]! * 10) / 10 };
}

/** Drags measured for the drop figure (their median is reported). */
const DROPS = 5;
/** What a fluid studio does at 300 states (issue 20), reported next to each figure; the asserted bounds are looser. */
const TARGETS = { openMs: 1_500, layoutMs: 2_000, guardKeystrokeMs: 50, dropMs: 100 };

describe('a 300-state machine in the studio (Performance API marks, Chromium)', () => {
  it('opens and lays out without blocking the page, drags a state and edits a guard fluidly', async () => {
    const studio = await startStudioServer();
    const { page, errors } = await openPage(browser);
    const figures: Record<string, unknown> = {};
    try {
      const spec = generatedMachine('generated-300', 300);
      expect(countStates(spec.states)).toBe(300);
      await mkdir(join(studio.rootDir, 'machines/generated-300'), { recursive: true });
      await writeFile(join(studio.rootDir, 'machines/generated-300/generated-300.flow.json'), JSON.stringify(spec, null, 2) + '\n');

      // Warm the page and the layout worker on a small machine first, then open the big one.
      await page.goto(`${studio.url}#order-support`);
      await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 60_000 });
      await page.evaluate(() => {
        delete document.body.dataset.canvasReady;
        performance.clearMarks();
        performance.clearMeasures();
        // The longest task on the page's main thread while the machine opens: a layout on it would show here.
        const w = window as unknown as { longest: number };
        w.longest = 0;
        new PerformanceObserver((list) => {
          for (const e of list.getEntries()) w.longest = Math.max(w.longest, e.duration);
        }).observe({ type: 'longtask' });
      });
      await page.selectOption('[data-testid=machine-select]', 'generated-300');
      await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 120_000 });
      figures.openMs = Math.round((await measures(page, 'flowing:open'))[0]!);
      figures.layoutInWorkerMs = Math.round((await measures(page, 'flowing:layout'))[0]!);
      figures.longestMainThreadTaskDuringOpenMs = Math.round(await page.evaluate(() => (window as unknown as { longest: number }).longest));
      await screenshot(page, 'graph-perf-300-open');

      // Drag a state with real mouse events, five times: every frame and every drop are measured.
      await page.evaluate(() => performance.clearMeasures('flowing:edit'));
      for (let drag = 0; drag < DROPS; drag++) {
        const box = (await page.locator('[data-testid=state-intake]').boundingBox())!;
        await page.mouse.move(box.x + 60, box.y + 12);
        await page.mouse.down();
        await page.mouse.move(box.x + 60 + (drag % 2 === 0 ? 160 : -160), box.y + 12 + (drag % 2 === 0 ? 48 : -48), { steps: 30 });
        await page.mouse.up();
        await expect.poll(() => measures(page, 'flowing:edit').then((m) => m.length)).toBe(drag + 1);
      }
      const frames = await measures(page, 'flowing:drag-frame');
      figures.dragFrameMs = summary(frames);
      figures.dropCommitMs = summary(await measures(page, 'flowing:edit'));

      // Edit a guard in the panel, one keystroke at a time: each keystroke is an edit measured to the next frame.
      await page.click('[data-testid=edge-intake-on-START-0]');
      await page.locator('[data-testid=transition-guard]').waitFor();
      await page.evaluate(() => performance.clearMeasures('flowing:edit'));
      await page.fill('[data-testid=transition-guard]', '');
      await page.locator('[data-testid=transition-guard]').pressSequentially('context.n >= 10', { delay: 30 });
      await page.waitForTimeout(300);
      figures.guardKeystrokeMs = summary(await measures(page, 'flowing:edit'));
      await expect
        .poll(() => page.locator('[data-testid=edge-intake-on-START-0]').getAttribute('data-full-label'))
        .toBe('START [context.n >= 10]');

      // The benchmark figures against the targets of a fluid studio (issue 20): medians where there are several.
      const benchmark = {
        openMs: [figures.openMs as number, TARGETS.openMs],
        layoutMs: [figures.layoutInWorkerMs as number, TARGETS.layoutMs],
        guardKeystrokeMs: [(figures.guardKeystrokeMs as { median: number }).median, TARGETS.guardKeystrokeMs],
        dropMs: [(figures.dropCommitMs as { median: number }).median, TARGETS.dropMs],
      };
      figures.benchmark = Object.fromEntries(
        Object.entries(benchmark).map(([name, [value, target]]) => [name, { value, target, met: value! <= target! }]),
      );
      await mkdir(ARTIFACTS_DIR, { recursive: true });
      await writeFile(join(ARTIFACTS_DIR, 'graph-perf-300.json'), JSON.stringify(figures, null, 2) + '\n');
      console.log('300-state figures (ms):', JSON.stringify(figures));
      for (const [name, [value, target]] of Object.entries(benchmark))
        console.log(`benchmark 300 states ${name}: ${value} ms (target ${target} ms${value! <= target! ? '' : ', not met'})`);
      expect(frames.length).toBeGreaterThan(5);
      // Generous bounds (the figures above are what counts): a shared 2-core machine, and the Vite dev server when used.
      expect((figures.dragFrameMs as { median: number }).median).toBeLessThan(100);
      expect((figures.guardKeystrokeMs as { median: number }).median).toBeLessThan(1000);
      expect(figures.longestMainThreadTaskDuringOpenMs as number).toBeLessThan(figures.layoutInWorkerMs as number);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 400_000);
});

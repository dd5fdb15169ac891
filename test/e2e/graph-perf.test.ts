import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowSpec } from '../../spec/index.ts';
import { quickLayout } from '../../studio/src/graph/index.ts';
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

/** Durations of every Performance API measure of that name (of that machine, when given), in ms. */
const measures = (page: Page, name: string, machine?: string) =>
  page.evaluate(
    ([n, m]) =>
      performance
        .getEntriesByName(n!, 'measure')
        .filter((e) => m === undefined || (e as PerformanceMeasure).detail?.machine === m)
        .map((e) => e.duration),
    [name, machine] as const,
  );

function summary(values: number[]): { n: number; median: number; p95: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 10) / 10;
  return { n: sorted.length, median: at(0.5), p95: at(0.95), max: Math.round(sorted[sorted.length - 1]! * 10) / 10 };
}

/** Waits for the elkjs layout of a first open to arrive; says whether it replaced the quick placement. */
async function placement(page: Page, machine = 'generated-300'): Promise<string> {
  await page.waitForFunction(
    (m) => performance.getEntriesByName('flowing:placement', 'measure').some((e) => (e as PerformanceMeasure).detail?.machine === m),
    machine,
    { timeout: 120_000 },
  );
  return page.evaluate(
    (m) =>
      (
        performance
          .getEntriesByName('flowing:placement', 'measure')
          .find((e) => (e as PerformanceMeasure).detail?.machine === m) as PerformanceMeasure
      ).detail.outcome as string,
    machine,
  );
}

/** The box of an element once two reads a frame apart agree (the view no longer moves it). */
async function settledBox(page: Page, selector: string): Promise<{ x: number; y: number; width: number; height: number }> {
  let last = '';
  let box: { x: number; y: number; width: number; height: number } | null = null;
  await expect
    .poll(
      async () => {
        box = await page.locator(selector).boundingBox();
        await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
        const now = JSON.stringify(box);
        const same = box !== null && now === last;
        last = now;
        return same;
      },
      { timeout: 30_000, message: `${selector} stays where it is drawn` },
    )
    .toBe(true);
  return box!;
}

/** Drags measured for the drop figure (their median is reported). */
const DROPS = 5;
/** Rounds of each open and layout figure (their medians are reported and asserted). */
const ROUNDS = 3;
/** What a fluid studio does at 300 states (issue 20), reported next to each figure; the asserted bounds are looser. */
const TARGETS = { openMs: 1_500, layoutMs: 2_000, guardKeystrokeMs: 50, dropMs: 100 };

describe('a 300-state machine in the studio (Performance API marks, Chromium)', () => {
  it('opens at its saved places without a layout, lays out in the worker, drags a state and edits a guard fluidly', async () => {
    const studio = await startStudioServer();
    const { page, errors } = await openPage(browser);
    await page.setViewportSize({ width: 1440, height: 900 });
    const figures: Record<string, unknown> = {};
    const file = join(studio.rootDir, 'machines/generated-300/generated-300.flow.json');
    const ready = () => page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 120_000 });
    /** Opens a machine from the picker (the other one first, so that each round is a fresh open); returns its open time. */
    const open = async (id: string) => {
      await page.selectOption('[data-testid=machine-select]', id === 'order-support' ? 'incident-triage' : 'order-support');
      await ready();
      await page.evaluate(() => {
        delete document.body.dataset.canvasReady;
        performance.clearMarks();
        performance.clearMeasures();
      });
      await page.selectOption('[data-testid=machine-select]', id);
      await ready();
      return (await measures(page, 'flowing:open'))[0]!;
    };
    /** Waits until the routes of the saved layout are in (the worker's layout after an open). */
    const routed = () =>
      expect
        .poll(() => measures(page, 'flowing:routes', 'generated-300').then((m) => m.length), {
          timeout: 120_000,
          message: 'the routes of the saved layout come from the worker once the machine is drawn',
        })
        .toBe(1);
    try {
      const spec = generatedMachine('generated-300', 300);
      expect(countStates(spec.states)).toBe(300);
      await mkdir(join(studio.rootDir, 'machines/generated-300'), { recursive: true });
      await writeFile(file, JSON.stringify(spec, null, 2) + '\n');

      // Warm the page and the layout worker on a small machine first.
      await page.goto(`${studio.url}#order-support`);
      await ready();

      // The first open of a machine that has no saved place: drawn at once at the quick placement, elkjs's layout
      // (in the worker) replaces it when it arrives.
      await page.evaluate(() => {
        // The longest task on the page's main thread from here on: a layout on it would show here.
        const w = window as unknown as { longest: number };
        w.longest = 0;
        new PerformanceObserver((list) => {
          for (const e of list.getEntries()) w.longest = Math.max(w.longest, e.duration);
        }).observe({ type: 'longtask' });
      });
      figures.firstOpenWithoutLayoutMs = Math.round(await open('generated-300'));
      figures.quickLayoutMs = Math.round((await measures(page, 'flowing:quick-layout', 'generated-300'))[0]! * 10) / 10;
      // Nothing was edited: the elkjs layout replaces the quick placement, routes and label places with it.
      expect(await placement(page)).toBe('replaced');
      figures.firstLayoutInWorkerMs = Math.round((await measures(page, 'flowing:layout', 'generated-300'))[0]!);
      await expect.poll(() => page.locator('.edge-label--placed').count()).toBeGreaterThan(0);
      // The cost bound is worked out in its worker: the longest task of the whole first open comes after it.
      await page.locator('[data-testid=cost-button]').waitFor();
      figures.validateDuringFirstOpenMs = Math.round((await measures(page, 'flowing:validate', 'generated-300'))[0] ?? -1);
      figures.longestMainThreadTaskDuringFirstOpenMs = Math.round(
        await page.evaluate(() => (window as unknown as { longest: number }).longest),
      );
      await page.click('[data-testid=save]');
      await expect.poll(() => page.locator('[data-testid=notice]').textContent()).toContain('Saved');
      const saved = JSON.parse(await readFile(file, 'utf8')) as FlowSpec;
      expect(Object.keys(saved.layout ?? {}).length).toBe(300);
      const quick = quickLayout(spec);
      const moved = Object.keys(quick).filter((key) => saved.layout![key]!.x !== quick[key]!.x || saved.layout![key]!.y !== quick[key]!.y);
      expect(moved.length, 'the saved places are the elkjs layout, not the quick placement').toBeGreaterThan(150);

      // Opening the saved machine draws it at its saved places; the routes follow from the worker.
      const opens: number[] = [];
      const routes: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        opens.push(await open('generated-300'));
        await routed();
        routes.push((await measures(page, 'flowing:routes', 'generated-300'))[0]!);
      }
      figures.openMs = summary(opens);
      figures.routesInWorkerMs = summary(routes);
      // Routes of a layout the studio saved fit it: transitions drawn along them, labels in their reserved boxes.
      await expect.poll(() => page.locator('.edge-label--placed').count()).toBeGreaterThan(0);
      await screenshot(page, 'graph-perf-300-open');

      // States added to the file by hand (no saved place): placed next to their neighbours as the machine opens.
      const keys = Object.keys(saved.layout!).filter((_k, i) => i % 30 === 7);
      const partial = { ...saved, layout: Object.fromEntries(Object.entries(saved.layout!).filter(([k]) => !keys.includes(k))) };
      await writeFile(file, JSON.stringify(partial, null, 2) + '\n');
      figures.openWith10UnplacedMs = Math.round(await open('generated-300'));
      await routed();

      // Auto-layout of the whole machine, in the worker.
      const layouts: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        await page.evaluate(() => performance.clearMeasures('flowing:layout'));
        await page.click('[data-testid=auto-layout]');
        await expect.poll(() => measures(page, 'flowing:layout').then((m) => m.length), { timeout: 120_000 }).toBe(1);
        layouts.push((await measures(page, 'flowing:layout'))[0]!);
        await expect.poll(() => page.locator('[data-testid=auto-layout]').isEnabled()).toBe(true);
      }
      figures.layoutInWorkerMs = summary(layouts);

      // Drag a state with real mouse events, five times: every frame and every drop are measured.
      await page.evaluate(() => performance.clearMeasures('flowing:edit'));
      for (let drag = 0; drag < DROPS; drag++) {
        const box = (await page.locator('[data-testid=state-intake]').boundingBox())!;
        await page.mouse.move(box.x + 60, box.y + 12);
        await page.mouse.down();
        await page.mouse.move(box.x + 60 + (drag % 2 === 0 ? 160 : -160), box.y + 12 + (drag % 2 === 0 ? 48 : -48), { steps: 30 });
        await page.mouse.up();
        await expect.poll(() => measures(page, 'flowing:edit').then((m) => m.length), { timeout: 30_000 }).toBe(drag + 1);
      }
      const frames = await measures(page, 'flowing:drag-frame');
      figures.dragFrameMs = summary(frames);
      figures.dropCommitMs = summary(await measures(page, 'flowing:edit'));

      // Edit a guard in the panel, one keystroke at a time: each keystroke is an edit measured to the next frame.
      // Its label may lie outside the view once intake was dragged (a plain route to a wide compound state).
      await page.locator('[data-testid=edge-intake-on-START-0]').dispatchEvent('click');
      await page.locator('[data-testid=transition-guard]').waitFor();
      await page.evaluate(() => performance.clearMeasures('flowing:edit'));
      await page.fill('[data-testid=transition-guard]', '');
      await page.locator('[data-testid=transition-guard]').pressSequentially('context.n >= 10', { delay: 30 });
      await page.waitForTimeout(300);
      figures.guardKeystrokeMs = summary(await measures(page, 'flowing:edit'));
      await expect
        .poll(() => page.locator('[data-testid=edge-intake-on-START-0]').getAttribute('data-full-label'))
        .toBe('START [context.n >= 10]');

      // The benchmark figures against the targets of a fluid studio (issue 20): medians of several rounds.
      const median = (name: string) => (figures[name] as { median: number }).median;
      const benchmark = {
        firstOpenMs: [figures.firstOpenWithoutLayoutMs as number, TARGETS.openMs],
        openMs: [median('openMs'), TARGETS.openMs],
        layoutMs: [median('layoutInWorkerMs'), TARGETS.layoutMs],
        guardKeystrokeMs: [median('guardKeystrokeMs'), TARGETS.guardKeystrokeMs],
        dropMs: [median('dropCommitMs'), TARGETS.dropMs],
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
      // Ratios and generous bounds (the figures above are what counts): a shared, loaded 2-core machine runs this.
      // Opening a machine at its saved places runs no layout: it takes a fraction of a layout, with or without a few
      // states to place.
      expect(median('openMs')).toBeLessThan(median('layoutInWorkerMs') / 2);
      expect(figures.openWith10UnplacedMs as number).toBeLessThan(median('layoutInWorkerMs') / 2);
      expect(median('openMs')).toBeLessThan(5 * TARGETS.openMs);
      // The first open of a machine without saved places waits for no layout either: a fraction of the elkjs layout
      // of the same open, which arrives later.
      expect(figures.firstOpenWithoutLayoutMs as number).toBeLessThan(5 * TARGETS.openMs);
      expect(figures.firstOpenWithoutLayoutMs as number).toBeLessThan((figures.firstLayoutInWorkerMs as number) / 2);
      expect(figures.quickLayoutMs as number).toBeLessThan(100);
      expect(median('dragFrameMs')).toBeLessThan(100);
      expect(median('guardKeystrokeMs')).toBeLessThan(1000);
      expect(median('dropCommitMs')).toBeLessThan(1000);
      // Neither elkjs nor the cost bound runs on the page: no task of the first open comes near the layout's time.
      expect(figures.longestMainThreadTaskDuringFirstOpenMs as number).toBeLessThan((figures.firstLayoutInWorkerMs as number) / 2);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 400_000);

  it('keeps a state dragged before the elkjs layout arrives, and the quick placement with a coded notice when the worker fails (the cost badge too)', async () => {
    const studio = await startStudioServer();
    const spec = generatedMachine('generated-300', 300);
    const quick = quickLayout(spec);
    const file = join(studio.rootDir, 'machines/generated-300/generated-300.flow.json');
    await mkdir(join(studio.rootDir, 'machines/generated-300'), { recursive: true });
    const savedLayout = async (page: Page) => {
      await page.click('[data-testid=save]');
      await expect.poll(() => page.locator('[data-testid=notice]').textContent()).toContain('Saved');
      return (JSON.parse(await readFile(file, 'utf8')) as FlowSpec).layout!;
    };
    const firstOpen = async (page: Page) => {
      await writeFile(file, JSON.stringify(spec, null, 2) + '\n');
      await page.setViewportSize({ width: 1440, height: 900 });
      await page.goto(`${studio.url}#generated-300`);
      await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 120_000 });
    };
    try {
      // The layout worker's script is held back (a slow network), so the drag surely comes first.
      {
        const { page, errors } = await openPage(browser);
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let requested = false;
        await page.route('**/assets/layout.worker-*.js', async (route) => {
          requested = true;
          await held;
          await route.continue();
        });
        try {
          await firstOpen(page);
          await expect.poll(() => requested, { message: 'the elkjs layout is on its way while the quick placement is drawn' }).toBe(true);
          const box = await settledBox(page, '[data-testid=state-intake]');
          await page.mouse.move(box.x + 60, box.y + 12);
          await page.mouse.down();
          await page.mouse.move(box.x + 60 + 160, box.y + 12 + 48, { steps: 20 });
          await page.mouse.up();
          await expect
            .poll(() => measures(page, 'flowing:edit').then((m) => m.length), {
              timeout: 30_000,
              message: 'the drop is committed as an edit',
            })
            .toBeGreaterThan(0);
          release();
          expect(await placement(page)).toBe('kept');
          // What the user saw is saved: the quick placement, with the dragged state where it was dropped.
          const layout = await savedLayout(page);
          expect(Object.keys(layout).length).toBe(300);
          for (const [key, at] of Object.entries(quick)) {
            if (key === 'intake') continue;
            expect({ x: layout[key]!.x, y: layout[key]!.y }, key).toEqual({ x: at.x, y: at.y });
          }
          expect(layout.intake!.x).toBeGreaterThan(quick.intake!.x + 100);
          expect(errors).toEqual([]);
        } finally {
          release();
          await page.context().close();
        }
      }
      // The workers cannot start: the quick placement stays, and the notice names the failure with its code.
      {
        const { page } = await openPage(browser);
        await page.route(/\/assets\/(layout|cost)\.worker-[^/]*\.js$/, (route) => route.abort());
        try {
          await firstOpen(page);
          expect(await placement(page)).toBe('failed');
          await expect.poll(() => page.locator('[data-testid=notice]').textContent()).toContain('STUDIO_LAYOUT_FAILED');
          await expect(page.locator('[data-testid=state-intake]').isVisible()).resolves.toBe(true);
          // The cost bound's worker cannot start either: the badge says so, with the code in its tooltip.
          await expect.poll(() => page.locator('[data-testid=cost-failed]').getAttribute('title')).toContain('STUDIO_COST_FAILED');
          const layout = await savedLayout(page);
          expect(layout).toEqual(quick);
        } finally {
          await page.context().close();
        }
      }
    } finally {
      await studio.close();
    }
  }, 400_000);
});

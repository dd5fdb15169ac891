// Layout and Inspect defects of the studio, each checked in Chromium at the two window sizes people use most: the
// side panel fits its controls, a new state lands in view, Generate leaves the problems readable, a machine opens on
// the first visit, a session opens its machine, icons are drawn (not font glyphs), session ids stay distinguishable,
// the refusal badge is legible and in view, edge labels sit on their edges, and a CORS refusal names its fix.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createMemoryStore, createRuntime } from '@flowing/runtime';
import { createServer, startServer } from '@flowing/runtime/server';
import { inspectCommand } from '../../bin/inspect/inspect.ts';
import { incidentTriage } from '../../machines/incident-triage/incident-triage.machine.ts';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { copyProject } from '../helpers/project.ts';
import { startStudioServer, type StudioTestServer } from '../helpers/studio-server.ts';
import { launchChromium, readLabelDistances, screenshot, zoomOutUntilVisible } from './browser.ts';
import { recordLongSession } from './inspect-history-files.ts';
import { startInspectStudio } from './inspect-live-harness.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

type Rect = { x: number; y: number; width: number; height: number };
const inside = (inner: Rect, outer: Rect, slack = 0.5) =>
  inner.x >= outer.x - slack &&
  inner.y >= outer.y - slack &&
  inner.x + inner.width <= outer.x + outer.width + slack &&
  inner.y + inner.height <= outer.y + outer.height + slack;
const intersects = (a: Rect, b: Rect) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

async function box(page: Page, selector: string): Promise<Rect> {
  const found = await page.locator(selector).first().boundingBox();
  if (!found) throw new Error(`${selector} is not on screen`);
  return found;
}

async function openPage(size: { width: number; height: number }): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: size });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  return { page, errors };
}

async function openMachine(page: Page, url: string, id: string): Promise<void> {
  await page.goto(`${url}#${id}`);
  await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 60_000 });
  await expect.poll(() => page.inputValue('[data-testid=machine-select]')).toBe(id);
}

/** An invoke whose done branches, error and timeout lead to four states side by side: their labels share a row. */
const LABEL_ROWS_SPEC = {
  specVersion: 1,
  id: 'label-rows',
  context: { orderId: { type: 'string', default: 'A1001' } },
  events: { GO: {}, RETRY: {} },
  initial: 'idle',
  states: {
    idle: { on: { GO: 'lookup' } },
    lookup: {
      invoke: {
        tool: 'query_order',
        input: { order_id: 'context.orderId', customer_id: "'c-100'" },
        onDone: [{ guard: "output.status == 'shipped'", target: 'shipped' }, { target: 'fallback' }],
        onError: 'failed',
      },
      after: { '30000': 'timed_out' },
    },
    shipped: { type: 'final' },
    fallback: { on: { RETRY: 'lookup' } },
    failed: { on: { RETRY: 'lookup' } },
    timed_out: { on: { RETRY: 'lookup' } },
  },
};

/** Code points of symbols that common system fonts lack (drawn as empty boxes): media controls, arrows, shapes. */
const FONT_GLYPHS = /[\u2300-\u23ff\u25a0-\u25ff\u2900-\u297f]/u;

describe.each([
  { width: 1440, height: 900 },
  { width: 1280, height: 800 },
])('studio layout at $width x $height', (size) => {
  const tag = `${size.width}x${size.height}`;

  describe('editor', () => {
    let studio: StudioTestServer;
    beforeAll(async () => {
      studio = await startStudioServer();
      await mkdir(join(studio.rootDir, 'machines/label-rows'), { recursive: true });
      await writeFile(join(studio.rootDir, 'machines/label-rows/label-rows.flow.json'), `${JSON.stringify(LABEL_ROWS_SPEC, null, 2)}\n`);
    });
    afterAll(async () => {
      await studio?.close();
    });

    it('opens a machine on the first visit, when the project has one', async () => {
      const { page, errors } = await openPage(size);
      try {
        await page.goto(studio.url);
        await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 60_000 });
        const opened = await page.inputValue('[data-testid=machine-select]');
        expect(['incident-triage', 'label-rows', 'order-support']).toContain(opened);
        expect(await page.locator('.react-flow__node').count()).toBeGreaterThan(0);
        expect(await page.locator('.canvas--empty').count()).toBe(0);
        expect(errors).toEqual([]);
      } finally {
        await page.context().close();
      }
    }, 120_000);

    it('keeps every control of a state with branches inside the side panel, the new-transition field included', async () => {
      const { page, errors } = await openPage(size);
      try {
        await openMachine(page, studio.url, 'order-support');
        await zoomOutUntilVisible(page, ['[data-testid=state-classify]']);
        await page.click('[data-testid=state-classify] .state-node__header');
        await page.locator('[data-testid=transitions-editor]').scrollIntoViewIfNeeded();
        const panel = page.locator('.side-panel');
        const { scrollWidth, clientWidth } = await panel.evaluate((el) => ({ scrollWidth: el.scrollWidth, clientWidth: el.clientWidth }));
        expect(scrollWidth, 'the side panel scrolls sideways').toBeLessThanOrEqual(clientWidth + 1);
        const panelBox = await box(page, '.side-panel');
        const controls = [
          '[data-testid=new-transition-kind]',
          '[data-testid=new-transition-event]',
          '[data-testid=new-transition-target]',
          '[data-testid=new-transition-add]',
          '[data-testid=branch-up]',
          '[data-testid=branch-down]',
          '[data-testid=branch-fallback]',
          '[data-testid=branch-remove]',
        ];
        for (const selector of controls) {
          const control = await box(page, selector);
          expect(control.x, `${selector} starts left of the panel`).toBeGreaterThanOrEqual(panelBox.x - 0.5);
          expect(control.x + control.width, `${selector} ends past the panel's right side`).toBeLessThanOrEqual(
            panelBox.x + clientWidth + 0.5,
          );
        }
        const field = page.locator('[data-testid=new-transition-event]');
        expect(await field.getAttribute('placeholder')).toBe('EVENT or 5000 (ms)');
        expect((await box(page, '[data-testid=new-transition-event]')).width).toBeGreaterThanOrEqual(110);
        await field.fill('PING');
        expect(await field.inputValue()).toBe('PING');
        await screenshot(page, `layout-side-panel-${tag}`);
        expect(errors).toEqual([]);
      } finally {
        await page.context().close();
      }
    }, 120_000);

    it('puts a state made with "+ State" in view, inside the canvas and clear of the side panel', async () => {
      const { page, errors } = await openPage(size);
      try {
        await openMachine(page, studio.url, 'order-support');
        await page.click('[data-testid=add-state]');
        await page.locator('[data-testid=state-panel]').waitFor();
        const name = await page.inputValue('[data-testid=state-name-input]');
        const canvas = await box(page, '.canvas .react-flow');
        const panel = await box(page, '.side-panel');
        await expect
          .poll(async () => {
            const added = await page.locator(`[data-testid=state-${name}]`).boundingBox();
            return !!added && inside(added, canvas) && !intersects(added, panel);
          })
          .toBe(true);
        await screenshot(page, `layout-add-state-${tag}`);
        expect(errors).toEqual([]);
      } finally {
        await page.context().close();
      }
    }, 120_000);

    it('puts each edge label on its own edge: the route runs through the label, nearer than any other route', async () => {
      const { page, errors } = await openPage(size);
      try {
        await openMachine(page, studio.url, 'label-rows');
        await zoomOutUntilVisible(page, ['[data-testid=state-fallback]', '[data-testid=state-timed_out]', '[data-testid=state-idle]']);
        const distances = await readLabelDistances(page);
        const texts = distances.map((d) => d.text);
        for (const text of ['after 30000ms', 'error', 'done #2 · fallback']) expect(texts).toContain(text);
        for (const d of distances) {
          expect(d.distancePx, `"${d.text}" is ${d.distancePx.toFixed(1)} px from its edge`).toBeLessThanOrEqual(1);
          expect(d.nearestOtherPx, `"${d.text}" is as near another edge`).toBeGreaterThan(d.distancePx + 4);
        }
        await screenshot(page, `layout-labels-${tag}`);
        expect(errors).toEqual([]);
      } finally {
        await page.context().close();
      }
    }, 120_000);

    it('leaves the problems list and its whole message in view while the generated code is shown', async () => {
      const { page, errors } = await openPage(size);
      try {
        await openMachine(page, studio.url, 'order-support');
        const label = '[data-testid="edge-fetch_order-onDone-0"]';
        await zoomOutUntilVisible(page, [label]);
        await page.click(label);
        await page.fill('[data-testid=transition-guard]', "context.intnet == 'refund'");
        await expect.poll(() => page.locator(label).textContent()).toContain('context.intnet');
        await page.click('[data-testid=generate]');
        await page.locator('[data-testid=generated-view]').waitFor({ timeout: 90_000 });
        const problem = page.locator('[data-testid=problem-item][data-code=CODEGEN_TYPE_ERROR]').first();
        await problem.waitFor({ timeout: 30_000 });
        const generated = await box(page, '[data-testid=generated-view]');
        const problems = await box(page, '[data-testid=problems-panel]');
        expect(intersects(generated, problems), 'the generated view covers the problems list').toBe(false);
        const message = problem.locator('.problem__message');
        expect(await message.textContent()).toContain('intnet');
        const shown = await message.evaluate((el) => {
          const r = el.getBoundingClientRect();
          const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
          return {
            rect: { x: r.x, y: r.y, width: r.width, height: r.height },
            onTop: !!hit && (hit === el || el.contains(hit) || hit.contains(el)),
            clipped: el.scrollWidth > el.clientWidth + 1,
          };
        });
        expect(shown.onTop, 'something covers the problem message').toBe(true);
        expect(shown.clipped, 'the problem message is cut off').toBe(false);
        expect(inside(shown.rect, problems), 'the problem message runs out of the problems list').toBe(true);
        expect(inside(shown.rect, { x: 0, y: 0, ...size }), 'the problem message runs out of the window').toBe(true);
        await screenshot(page, `layout-generate-${tag}`);
        expect(errors).toEqual([]);
      } finally {
        await page.context().close();
      }
    }, 180_000);
  });

  describe('inspect', () => {
    it('opens the machine of a session picked from every machine’s list, with ids told apart and icons drawn as SVG', async () => {
      const studio = await startInspectStudio();
      const { page, errors } = await openPage(size);
      try {
        await studio.runtime.createSession(incidentTriage, undefined, { sessionId: 's-watch-1' });
        await studio.runtime.createSession(incidentTriage, undefined, { sessionId: 's-watch-2' });
        const long = ['order-support-nightly-check-0001', 'order-support-nightly-check-0002'];
        for (const sessionId of long) await studio.runtime.createSession(orderSupport, undefined, { sessionId });
        await openMachine(page, studio.url, 'order-support');
        await page.click('[data-testid=mode-inspect]');
        await page.click('[data-testid=inspect-all-machines]');
        const row = (id: string) => page.locator(`[data-testid=inspect-session][data-session-id="${id}"]`);
        await row('s-watch-2').waitFor({ timeout: 15_000 });
        await row(long[1]!).waitFor({ timeout: 15_000 });
        const ids = ['s-watch-1', 's-watch-2', ...long];
        const shownIds = await Promise.all(ids.map((id) => row(id).locator('.inspect-session__id').textContent()));
        expect(new Set(shownIds).size, `ids shown: ${shownIds.join(', ')}`).toBe(ids.length);
        expect(shownIds.slice(0, 2)).toEqual(['s-watch-1', 's-watch-2']);
        for (const id of ids) expect(await row(id).locator('.inspect-session__id').getAttribute('title')).toBe(id);

        await row('s-watch-2').click();
        await expect.poll(() => page.inputValue('[data-testid=machine-select]'), { timeout: 30_000 }).toBe('incident-triage');
        await page.locator('[data-testid=inspect-graph]').waitFor({ timeout: 30_000 });
        expect(await page.getByText('belongs to another machine').count()).toBe(0);
        expect(await page.locator('[data-testid=session-id]').getAttribute('title')).toBe('session s-watch-2');

        const iconButtons = page.locator('[data-testid=history-scrubber] button[aria-label], .react-flow__controls button');
        expect(await iconButtons.count()).toBeGreaterThanOrEqual(6);
        for (const button of await iconButtons.all()) {
          const text = (await button.textContent()) ?? '';
          expect(text, `a font glyph in ${await button.getAttribute('aria-label')}`).not.toMatch(FONT_GLYPHS);
        }
        for (const id of ['step-first', 'step-back', 'step-forward', 'step-last'])
          expect(await page.locator(`[data-testid=${id}] svg`).count(), id).toBe(1);
        await screenshot(page, `layout-inspect-sessions-${tag}`);
        expect(errors).toEqual([]);
      } finally {
        await page.context().close();
        await studio.close();
      }
    }, 180_000);

    it('draws the refusal badge at 11 px or more, whole, inside the graph', async () => {
      const studio = await startInspectStudio();
      const { page, errors } = await openPage(size);
      try {
        const session = await studio.runtime.createSession(orderSupport, undefined, { sessionId: 'refused-at-idle' });
        expect((await session.send({ type: 'APPROVE' })).applied).toBe(false);
        await openMachine(page, studio.url, 'order-support');
        await page.click('[data-testid=mode-inspect]');
        await page.locator('[data-testid=inspect-session][data-session-id="refused-at-idle"]').click({ timeout: 15_000 });
        const badge = page.locator('[data-testid=refusal-idle]');
        await badge.waitFor({ timeout: 30_000 });
        const graph = await box(page, '[data-testid=inspect-graph]');
        await expect
          .poll(async () => {
            const b = await badge.boundingBox();
            return !!b && inside(b, graph);
          })
          .toBe(true);
        const fontPx = await badge.evaluate((el) => {
          // The rendered size: the computed font size times any zoom of the transformed layers around it.
          const scale = el.getBoundingClientRect().height / (el as HTMLElement).offsetHeight;
          return parseFloat(getComputedStyle(el).fontSize) * scale;
        });
        expect(fontPx).toBeGreaterThanOrEqual(11);
        expect(await badge.textContent()).toContain('APPROVE refused: NO_TRANSITION');
        await screenshot(page, `layout-refusal-${tag}`);
        expect(errors).toEqual([]);
      } finally {
        await page.context().close();
        await studio.close();
      }
    }, 180_000);

    it('flowing inspect FILE uses the whole window: the graph fills it, legible, with the scrubber in view and no session hint', async () => {
      const long = await recordLongSession(60);
      const copy = await copyProject('flowing-inspect-layout-');
      await writeFile(join(copy.dir, 'refund.flowing.jsonl'), long.text);
      const specs = {
        'order-support': JSON.parse(await readFile(join(copy.dir, 'machines/order-support/order-support.flow.json'), 'utf8')),
      };
      const runtimeServer = createServer(createRuntime({ machines: [orderSupport], store: createMemoryStore() }), { specs, log: () => {} });
      const cwd = process.cwd();
      process.chdir(copy.dir);
      let started: Awaited<ReturnType<typeof inspectCommand>>;
      try {
        started = await inspectCommand('refund.flowing.jsonl', {
          port: '0',
          host: '127.0.0.1',
          appDir: inject('studioAppDir'),
          runtimeApp: { fetch: runtimeServer.fetch, close: async () => runtimeServer.dispose() },
        });
      } finally {
        process.chdir(cwd);
      }
      const { page, errors } = await openPage(size);
      try {
        await page.goto(started!.pageUrl);
        const graphSelector = '[data-testid=offline-view] [data-testid=inspect-graph]';
        await page.locator(graphSelector).waitFor({ timeout: 30_000 });
        await page.locator(`${graphSelector} .react-flow__node`).first().waitFor();
        const graph = await box(page, graphSelector);
        expect(graph.width, 'graph width').toBeGreaterThanOrEqual(size.width * 0.45);
        expect(graph.height, 'graph height').toBeGreaterThanOrEqual(size.height * 0.5);
        const scrubber = await box(page, '[data-testid=scrubber]');
        expect(inside(scrubber, { x: 0, y: 0, ...size }), 'the scrubber is below the fold').toBe(true);
        expect(await page.evaluate(() => document.scrollingElement!.scrollHeight <= window.innerHeight)).toBe(true);
        const nameFontPx = await page
          .locator(`${graphSelector} .state-node__name`)
          .first()
          .evaluate((el) => {
            const scale = el.getBoundingClientRect().height / (el as HTMLElement).offsetHeight;
            return parseFloat(getComputedStyle(el).fontSize) * scale;
          });
        expect(nameFontPx, 'state names on the graph').toBeGreaterThanOrEqual(11);
        expect(await page.getByText('Start a session or pick one from the list.').count()).toBe(0);
        await screenshot(page, `layout-inspect-file-${tag}`);
        expect(errors).toEqual([]);
      } finally {
        await page.context().close();
        await started?.studio.close();
        await copy.remove();
      }
    }, 180_000);

    it('names the --cors fix when a remote runtime refuses the studio’s origin', async () => {
      const studio = await startStudioServer();
      const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore() });
      const remote = await startServer(runtime, { port: 0, host: '127.0.0.1', log: () => {} });
      const { page, errors } = await openPage(size);
      try {
        await openMachine(page, studio.url, 'order-support');
        await page.click('[data-testid=mode-inspect]');
        await page.click('[data-testid=inspect-connect-remote]');
        await page.fill('[data-testid=inspect-remote-url]', remote.url);
        await page.locator('[data-testid=inspect-remote-url]').press('Enter');
        const error = page.locator('[data-testid=inspect-source-error]');
        await error.waitFor({ timeout: 30_000 });
        const origin = new URL(studio.url).origin;
        await expect.poll(() => error.textContent(), { timeout: 15_000 }).toContain(`flowing serve --cors ${origin}`);
        expect(await error.textContent()).toMatch(/^RUNTIME_CORS_REFUSED/);
        await screenshot(page, `layout-cors-${tag}`);
        // The browser reports the blocked requests itself; the page adds no error of its own.
        expect(errors.filter((e) => !/CORS|Failed to load resource|ERR_FAILED/.test(e))).toEqual([]);
      } finally {
        await page.context().close();
        await remote.close();
        await studio.close();
      }
    }, 120_000);
  });
});

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStudioServer, type StudioTestServer } from '../helpers/studio-server.ts';
import { ARTIFACTS_DIR, findOverlaps, launchChromium, openPage, readCanvasGeometry, screenshot } from './browser.ts';
import { countStates, generatedMachine } from './graph-machines.ts';

let browser: Browser;
let studio: StudioTestServer;
const figures: Record<string, unknown> = {};

beforeAll(async () => {
  browser = await launchChromium();
  studio = await startStudioServer();
  const spec = generatedMachine('generated-60', 60);
  expect(countStates(spec.states)).toBe(60);
  await mkdir(join(studio.rootDir, 'machines/generated-60'), { recursive: true });
  await writeFile(join(studio.rootDir, 'machines/generated-60/generated-60.flow.json'), JSON.stringify(spec, null, 2) + '\n');
});
afterAll(async () => {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  await writeFile(join(ARTIFACTS_DIR, 'graph-geometry.json'), JSON.stringify(figures, null, 2) + '\n');
  await browser?.close();
  await studio?.close();
});

async function openAt(page: Page, id: string) {
  await page.goto(`${studio.url}#${id}`);
  await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 60_000 });
  // Fit-view runs on open; press the fit button as a user would, then let the frame settle.
  await page.click('[data-testid=fit-view]');
  await page.waitForTimeout(200);
}

describe('a studio graph people can read (Chromium, 1280x800, fit-view)', () => {
  for (const id of ['order-support', 'incident-triage', 'generated-60']) {
    it(`${id}: no edge label on a state or on another label, none clipped, every label at least 10 px`, async () => {
      const { page, errors } = await openPage(browser);
      try {
        await openAt(page, id);
        const geometry = await readCanvasGeometry(page);
        const { labelOnNode, labelOnLabel } = findOverlaps(geometry);
        const edgeCount = await page.locator('.react-flow__edge').count();
        const smallest = Math.min(...geometry.labels.map((l) => l.fontPx));
        figures[id] = {
          zoom: Math.round(geometry.zoom * 1000) / 1000,
          smallestLabelFontPx: Math.round(smallest * 10) / 10,
          labels: geometry.labels.length,
          states: geometry.nodes.length,
          labelOnNode: labelOnNode.length,
          labelOnLabel: labelOnLabel.length,
          clipped: geometry.labels.filter((l) => l.clipped).length,
        };
        await screenshot(page, `graph-${id}-fit`);
        expect(geometry.labels.length).toBe(edgeCount);
        expect(geometry.labels.length).toBeGreaterThan(10);
        expect(labelOnNode).toEqual([]);
        expect(labelOnLabel).toEqual([]);
        expect(geometry.labels.filter((l) => l.clipped).map((l) => `${l.id}: ${l.text}`)).toEqual([]);
        expect(smallest).toBeGreaterThanOrEqual(10);
        expect(errors).toEqual([]);
      } finally {
        await page.context().close();
      }
    }, 120_000);
  }

  it('draws the machine top to bottom: the initial state is above the states it leads to, regions side by side', async () => {
    const { page } = await openPage(browser);
    try {
      await openAt(page, 'incident-triage');
      const box = async (name: string) => (await page.locator(`[data-testid=state-${name}]`).boundingBox())!;
      const [waiting, gathering, summarize, logs, metrics] = await Promise.all(
        ['waiting', 'gathering', 'summarize', 'logs', 'metrics'].map(box),
      );
      expect(waiting!.y + waiting!.height).toBeLessThan(gathering!.y);
      expect(gathering!.y + gathering!.height).toBeLessThan(summarize!.y);
      // Parallel regions: side by side (same top, one right of the other).
      expect(Math.abs(logs!.y - metrics!.y)).toBeLessThan(2);
      expect(Math.min(logs!.x + logs!.width, metrics!.x + metrics!.width)).toBeLessThanOrEqual(Math.max(logs!.x, metrics!.x));
    } finally {
      await page.context().close();
    }
  }, 60_000);

  it('elides a long guard on the canvas and keeps its full text on hover', async () => {
    const { page } = await openPage(browser);
    try {
      await openAt(page, 'generated-60');
      const label = page.locator('[data-testid="edge-step_2-on-BACK-0"]');
      expect(await label.textContent()).toContain('…');
      expect(await label.getAttribute('title')).toContain('[context.n > 0 && context.orderId != undefined]');
    } finally {
      await page.context().close();
    }
  }, 60_000);

  it('shows the graph in the minimap', async () => {
    const { page } = await openPage(browser);
    try {
      await openAt(page, 'order-support');
      const nodes = await page.locator('.react-flow__minimap-node').count();
      expect(nodes).toBe(await page.locator('.react-flow__node').count());
      const filled = await page
        .locator('.react-flow__minimap-node')
        .first()
        .evaluate((el) => getComputedStyle(el).fill);
      expect(filled).not.toBe('none');
    } finally {
      await page.context().close();
    }
  }, 60_000);
});

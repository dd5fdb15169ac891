import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Where e2e screenshots go (git-ignored). */
export const ARTIFACTS_DIR = fileURLToPath(new URL('../artifacts/', import.meta.url));

/** Launches the system Chromium headless (`FLOWING_CHROMIUM` overrides the path). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.FLOWING_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** A page at 1280x800 that records page errors and console errors, so that a test can assert there were none. */
export async function openPage(browser: Browser): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  return { page, errors };
}

/** Saves a full-page screenshot under test/artifacts/. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  await page.screenshot({ path: `${ARTIFACTS_DIR}${name}.png` });
}

/** Drags from the centre of one element to the centre of another with real mouse events. */
export async function drag(page: Page, from: string, to: string): Promise<void> {
  // The canvas may still be panning to a state just added or selected (an animated centring): wait until both ends stay put.
  const a = await settledBox(page, from);
  const b = await settledBox(page, to);
  if (!a || !b) throw new Error(`cannot drag: ${from} or ${to} is not visible`);
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 8 });
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 8 });
  await page.mouse.up();
}

/** The element's box once it is the same over two animation frames in a row (undefined when it is not shown). */
async function settledBox(page: Page, selector: string) {
  let previous = await page.locator(selector).boundingBox();
  for (let frame = 0; frame < 120; frame++) {
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    const box = await page.locator(selector).boundingBox();
    if (box && previous && box.x === previous.x && box.y === previous.y && box.width === previous.width) return box;
    previous = box;
  }
  return previous;
}

/** What a geometry check reads from the canvas: every edge label and state box on screen, and the zoom. */
export interface CanvasGeometry {
  zoom: number;
  labels: Array<{ id: string; text: string; x: number; y: number; width: number; height: number; fontPx: number; clipped: boolean }>;
  /** Leaf states whole; compound and parallel states only their title strip (their children's labels sit inside). */
  nodes: Array<{ id: string; x: number; y: number; width: number; height: number }>;
}

/** Reads label boxes, rendered label font sizes and state boxes from the studio canvas, in screen pixels. */
export function readCanvasGeometry(page: Page, groupHeaderPx = 40): Promise<CanvasGeometry> {
  return page.evaluate((header) => {
    const viewport = document.querySelector<HTMLElement>('.react-flow__viewport');
    const zoom = viewport ? new DOMMatrixReadOnly(getComputedStyle(viewport).transform).a : 1;
    const labels = [...document.querySelectorAll<HTMLElement>('.edge-label')].map((el) => {
      const r = el.getBoundingClientRect();
      return {
        id: el.dataset.testid ?? '',
        text: el.textContent ?? '',
        x: r.x,
        y: r.y,
        width: r.width,
        height: r.height,
        fontPx: parseFloat(getComputedStyle(el).fontSize) * zoom,
        clipped: el.scrollWidth > el.clientWidth + 0.5 || el.scrollHeight > el.clientHeight + 0.5,
      };
    });
    const nodes = [...document.querySelectorAll<HTMLElement>('.react-flow__node')].map((el) => {
      const r = el.getBoundingClientRect();
      const group = !!el.querySelector('.state-node--compound, .state-node--parallel');
      return { id: el.dataset.id ?? '', x: r.x, y: r.y, width: r.width, height: group ? Math.min(r.height, header * zoom) : r.height };
    });
    return { zoom, labels, nodes };
  }, groupHeaderPx);
}

/** Pairs of overlapping boxes (by more than `slack` screen pixels each way): labels on states, labels on labels. */
export function findOverlaps(geometry: CanvasGeometry, slack = 0.5): { labelOnNode: string[]; labelOnLabel: string[] } {
  type R = { id: string; x: number; y: number; width: number; height: number };
  const hit = (a: R, b: R) =>
    a.x + slack < b.x + b.width && b.x + slack < a.x + a.width && a.y + slack < b.y + b.height && b.y + slack < a.y + a.height;
  const labelOnNode: string[] = [];
  const labelOnLabel: string[] = [];
  geometry.labels.forEach((label, i) => {
    for (const node of geometry.nodes) if (hit(label, node)) labelOnNode.push(`${label.id} (${label.text}) on ${node.id}`);
    for (const other of geometry.labels.slice(i + 1)) if (hit(label, other)) labelOnLabel.push(`${label.id} on ${other.id}`);
  });
  return { labelOnNode, labelOnLabel };
}

/**
 * Zooms the canvas out (its zoom-out control) until every selector's element lies inside the canvas, for a drag
 * between states that fit-view (which keeps labels legible and scrolls) does not show at once.
 */
export async function zoomOutUntilVisible(page: Page, selectors: string[], maxSteps = 10): Promise<void> {
  const canvas = await page.locator('.canvas .react-flow').boundingBox();
  if (!canvas) throw new Error('no canvas on the page');
  for (let step = 0; step <= maxSteps; step++) {
    const boxes = await Promise.all(selectors.map((s) => page.locator(s).boundingBox()));
    const inside = boxes.every(
      (b) =>
        b &&
        b.x >= canvas.x + 8 &&
        b.y >= canvas.y + 8 &&
        b.x + b.width <= canvas.x + canvas.width - 8 &&
        b.y + b.height <= canvas.y + canvas.height - 8,
    );
    if (inside) return;
    if (step === maxSteps) throw new Error(`not all of ${selectors.join(', ')} fit in the canvas after ${maxSteps} zoom-outs`);
    await page.click('.react-flow__controls-zoomout');
    await page.waitForTimeout(120);
  }
}

/** How far each edge label lies from its own edge's drawn path, in screen pixels (0 when the path runs through it). */
export interface LabelDistance {
  edgeId: string;
  text: string;
  distancePx: number;
  /** How far the nearest label of another edge is from this edge's path (Infinity when there is none). */
  nearestOtherPx: number;
}

/** Measures, for every edge label on the canvas, its distance to its own edge's path and to the other edges' paths. */
export function readLabelDistances(page: Page, root = '.canvas'): Promise<LabelDistance[]> {
  return page.evaluate((rootSelector) => {
    const container = document.querySelector(rootSelector);
    if (!container) return [];
    const samples = new Map<string, Array<{ x: number; y: number }>>();
    for (const edge of container.querySelectorAll<SVGGElement>('.react-flow__edge')) {
      const path = edge.querySelector<SVGPathElement>('path.transition-edge');
      const id = edge.dataset.id ?? edge.getAttribute('data-id') ?? '';
      const matrix = path?.getScreenCTM();
      if (!path || !matrix) continue;
      const length = path.getTotalLength();
      const points: Array<{ x: number; y: number }> = [];
      for (let at = 0; at <= length; at += 2) {
        const p = new DOMPoint(path.getPointAtLength(at).x, path.getPointAtLength(at).y).matrixTransform(matrix);
        points.push({ x: p.x, y: p.y });
      }
      samples.set(id, points);
    }
    return [...container.querySelectorAll<HTMLElement>('.edge-label')].map((label) => {
      const box = label.getBoundingClientRect();
      const edgeId = label.dataset.edgeId ?? '';
      let distancePx = Number.POSITIVE_INFINITY;
      let nearestOtherPx = Number.POSITIVE_INFINITY;
      // (No named helper functions in here: the test transform would wrap them in a helper the page does not have.)
      for (const [id, points] of samples) {
        for (const p of points) {
          const d = Math.hypot(Math.max(box.left - p.x, 0, p.x - box.right), Math.max(box.top - p.y, 0, p.y - box.bottom));
          if (id === edgeId) distancePx = Math.min(distancePx, d);
          else nearestOtherPx = Math.min(nearestOtherPx, d);
        }
      }
      return { edgeId, text: label.textContent ?? '', distancePx, nearestOtherPx };
    });
  }, root);
}

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openPage, screenshot } from './browser.ts';
import { startInspectStudio, type InspectStudio } from './inspect-live-harness.ts';

let browser: Browser;
beforeAll(async () => { browser = await launchChromium(); });
afterAll(async () => { await browser?.close(); });

/** Opens the studio on a machine and switches to Inspect mode. */
async function openInspect(page: Page, studio: InspectStudio, machineId: string): Promise<void> {
  await page.goto(`${studio.url}#${machineId}`);
  await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });
  await page.click('[data-testid=mode-inspect]');
  await page.locator('[data-testid=inspect-start]').waitFor();
}

/** Starts a session from the studio and waits until it is selected and streaming. */
async function startSession(page: Page): Promise<string> {
  await page.click('[data-testid=inspect-start]');
  await page.locator('[data-testid=inspect-stream-state]', { hasText: 'open' }).waitFor({ timeout: 15_000 });
  const id = await page.locator('.inspect-controls__id').textContent();
  return id!;
}

/** Sends an event through the generated form: picks the type, fills text fields, presses Send. */
async function sendEvent(page: Page, type: string, fields: Record<string, string> = {}): Promise<void> {
  await page.selectOption('[data-testid=inspect-event-type]', type);
  for (const [name, value] of Object.entries(fields)) await page.fill(`[data-testid=event-${type}-${name}]`, value);
  await page.click('[data-testid=inspect-send]');
}

/** The active leaf states the graph highlights (dotted paths, space-separated). */
const activeStates = (page: Page) => page.locator('[data-testid=inspect-graph]').getAttribute('data-active');

/** The event types the list shows, in order, read from every rendered row (the list is virtualised: scroll it through). */
async function listedEvents(page: Page): Promise<Array<{ seq: number; type: string }>> {
  return page.evaluate(async () => {
    const scroller = document.querySelector<HTMLElement>('[data-testid=inspect-events]')!;
    const seen = new Map<number, string>();
    const read = () => {
      for (const row of scroller.querySelectorAll<HTMLElement>('[data-testid=inspect-event]')) seen.set(Number(row.dataset.seq), row.dataset.type!);
    };
    scroller.scrollTop = 0;
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    for (;;) {
      read();
      if (scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 1) break;
      scroller.scrollTop += scroller.clientHeight / 2;
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    }
    return [...seen.entries()].sort((a, b) => a[0] - b[0]).map(([seq, type]) => ({ seq, type }));
  });
}

/** Whether `items` appear in `sequence` in the same order (not necessarily next to each other). */
function isSubsequence(items: readonly string[], sequence: readonly string[]): boolean {
  let at = 0;
  for (const item of items) {
    while (at < sequence.length && sequence[at] !== item) at++;
    if (at === sequence.length) return false;
    at++;
  }
  return true;
}

describe('studio Inspect mode: live sessions in Chromium', () => {
  it('starts an order-support session, sends a message: the list fills live, the highlight follows the run, tool calls appear', async () => {
    const studio = await startInspectStudio({ toolDelayMs: 400 });
    const { page, errors } = await openPage(browser);
    try {
      await openInspect(page, studio, 'order-support');
      const sessionId = await startSession(page);
      await expect.poll(() => activeStates(page)).toBe('active.idle');
      // Record every highlight the graph shows from here on.
      await page.evaluate(() => {
        const graph = document.querySelector('[data-testid=inspect-graph]')!;
        const seen: string[] = [graph.getAttribute('data-active') ?? ''];
        (window as unknown as { highlights: string[] }).highlights = seen;
        new MutationObserver(() => {
          const now = graph.getAttribute('data-active') ?? '';
          if (seen[seen.length - 1] !== now) seen.push(now);
        }).observe(graph, { attributes: true, attributeFilter: ['data-active'] });
      });
      await sendEvent(page, 'USER_MESSAGE', { text: 'where is my order A1001' });
      // While a tool runs (400 ms each), the list already shows its start and the graph its state.
      await page.locator('[data-testid=inspect-event][data-type="tool.started"]').first().waitFor({ timeout: 10_000 });
      const midRun = await activeStates(page);
      expect(['active.resolve_user', 'active.fetch_order', 'active.trace_shipment']).toContain(midRun);
      await expect.poll(() => activeStates(page), { timeout: 15_000 }).toBe('active.idle');
      const highlights = await page.evaluate(() => (window as unknown as { highlights: string[] }).highlights);
      const log = await studio.runtime.session(sessionId).events();
      // The highlight walks the run's own path, in order; states that lasted less than a frame (the scripted model's
      // instant answers) may be skipped, the tool states (400 ms each) never are.
      const path = log.filter((e) => e.type === 'state.changed').map((e) => `active.${(e.data.state as { active: string }).active}`);
      expect(path).toEqual(['active.idle', 'active.classify', 'active.extract_order_id', 'active.resolve_user', 'active.fetch_order', 'active.trace_shipment', 'active.compose_reply', 'active.idle']);
      expect(isSubsequence(highlights, path)).toBe(true);
      expect(highlights).toEqual(expect.arrayContaining(['active.resolve_user', 'active.fetch_order', 'active.trace_shipment']));
      expect(highlights.at(-1)).toBe('active.idle');

      const listed = await listedEvents(page);
      expect(listed).toEqual(log.map((e) => ({ seq: e.seq, type: e.type })));
      const tools = log.filter((e) => e.type === 'tool.completed').map((e) => e.data.tool);
      expect(tools).toEqual(['resolve_user', 'query_order', 'trace_shipment']);
      expect(listed.filter((e) => e.type === 'tool.started')).toHaveLength(3);
      expect(studio.counts).toMatchObject({ resolve_user: 1, query_order: 1, trace_shipment: 1, issue_refund: 0 });
      await expect.poll(() => page.locator('[data-testid=inspect-messages] .inspect-message[data-complete=true]').first().textContent()).toContain('Order A1001 is shipped');
      await screenshot(page, 'inspect-live-1-run');
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 90_000);
});

// Machines that compose, in Chromium at 1440x900: machine-invoke blocks that open the child machine, channel badges,
// hand-off targets and branches on the graph; in Inspect mode child sessions nested under their parent, where a child
// ran while stepping through its parent, and channel messages as links between the two sessions.
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editJsonFile } from '../helpers/project.ts';
import { launchChromium, screenshot } from './browser.ts';
import { startComposeStudio, type ComposeStudio } from './compose-studio.ts';

let browser: Browser;
let studio: ComposeStudio;
beforeAll(async () => {
  [browser, studio] = await Promise.all([launchChromium(), startComposeStudio()]);
}, 120_000);
afterAll(async () => {
  await studio?.close();
  await browser?.close();
});

async function openPage(): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  return { page, errors };
}

async function openMachine(page: Page, id: string): Promise<void> {
  await page.locator(`[data-testid=machine-select] option[value="${id}"]`).waitFor({ state: 'attached' });
  await page.selectOption('[data-testid=machine-select]', id);
  await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });
}

describe('composed machines on the graph', () => {
  it('draws the child machine with a link that opens it, channel badges, and hand-off targets and branches', async () => {
    // An agent that hands off (the `handoffs` list of an agent call): drawn from the file even where the schema does
    // not know the field yet.
    await editJsonFile(join(studio.rootDir, 'machines/desk/desk.flow.json'), (spec) => {
      spec.states.idle.on.HELP = 'triage';
      spec.events.HELP = {};
      spec.states.triage = {
        invoke: {
          llm: 'agent',
          prompt: 'Help with order {{ context.orderId }}',
          handoffs: ['billing', 'ledger'],
          onDone: [{ guard: "output.handoff == 'billing'", target: 'billing' }, { target: 'done' }],
        },
      };
    });
    const { page, errors } = await openPage();
    try {
      await page.goto(studio.url);
      await openMachine(page, 'desk');
      const link = page.locator('[data-testid=open-machine-billing]');
      expect(await link.textContent()).toBe('billing');
      expect(await link.isEnabled()).toBe(true);
      const emits = page.locator('[data-testid=emits-idle]');
      expect(await emits.getAttribute('data-channels')).toBe('ledger.note');
      expect(await emits.getAttribute('title')).toContain('ledger.note (on START)');
      expect(await page.locator('[data-testid^=emits-]').count()).toBe(1);
      expect(await page.locator('[data-testid=handoffs-triage]').getAttribute('data-targets')).toBe('billing ledger');
      const handoffEdges = page.locator('.edge-label--handoff');
      expect(await handoffEdges.count()).toBe(1);
      expect(await handoffEdges.getAttribute('data-handoff')).toBe('billing');
      expect(await handoffEdges.getAttribute('data-testid')).toBe('edge-triage-onDone-0');
      // desk listens to no channel.
      expect(await page.locator('[data-testid=machine-listens]').count()).toBe(0);
      await screenshot(page, 'compose-graph-desk');

      await link.click();
      await page.waitForFunction(() => window.location.hash === '#billing');
      await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });
      expect(await page.locator('[data-testid=machine-select]').inputValue()).toBe('billing');
      await page.locator('[data-testid=state-await_approval]').waitFor();

      await openMachine(page, 'ledger');
      const listens = page.locator('[data-testid=machine-listens]');
      expect(await listens.getAttribute('data-patterns')).toBe('ledger.*');
      expect(await listens.getAttribute('data-key')).toBe('orderId');
      await screenshot(page, 'compose-graph-ledger');
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  });
});

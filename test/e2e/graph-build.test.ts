import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime, type AnyMachineDefinition } from '@flowing/runtime';
import { countingTools } from '../helpers/runtime-counting.ts';
import { startStudioServer, type StudioTestServer } from '../helpers/studio-server.ts';
import { drag, launchChromium, openPage, screenshot, zoomOutUntilVisible } from './browser.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

async function open(page: Page, studio: StudioTestServer, id: string) {
  await page.goto(`${studio.url}#${id}`);
  await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 60_000 });
}

async function addState(page: Page, name: string, type?: 'final') {
  await page.click('[data-testid=add-state]');
  await page.locator('[data-testid=state-panel]').waitFor();
  await page.fill('[data-testid=state-name-input]', name);
  await page.press('[data-testid=state-name-input]', 'Enter');
  await page.locator(`[data-testid=state-${name}]`).waitFor();
  if (type) await page.selectOption('[data-testid=state-type]', type);
}

/** Drags from a handle of one state to the incoming handle of another, zooming out first when they are not both in view. */
async function connect(page: Page, from: string, to: string) {
  await page.keyboard.press('Escape');
  // A type check's answer redraws the states it marks: drag once the last edit's check is in.
  await page.waitForFunction(() => document.documentElement.dataset.typeCheck !== 'pending', undefined, { timeout: 120_000 });
  const ends = [from, `[data-testid=state-${to}] .react-flow__handle.target`];
  await zoomOutUntilVisible(page, ends);
  await drag(page, ends[0]!, ends[1]!);
}

/**
 * A drag from a state's handle that opens the "which kind" dialog. The first drag of a new machine sometimes ends
 * without a connection (seen only in this test, about one run in three since the studio's layout and live-check
 * changes; not yet explained): the drag is made once more before the dialog is awaited, as a person would.
 */
async function connectWithDialog(page: Page, from: string, to: string) {
  const dialog = page.locator('[data-testid=connect-dialog]');
  await connect(page, from, to);
  if (
    !(await dialog.waitFor({ timeout: 5_000 }).then(
      () => true,
      () => false,
    ))
  )
    await connect(page, from, to);
  await dialog.waitFor();
}

describe('building a machine only through the studio UI (Chromium)', () => {
  it('a tool call that branches approved (output.total <= 100) or denied (fallback), with always and after; saved, generated, both branches run', async () => {
    const studio = await startStudioServer();
    const { page, errors } = await openPage(browser);
    try {
      // What "New machine" writes: an id and one initial state. Everything else is built in the browser.
      await mkdir(join(studio.rootDir, 'machines/approval-check'), { recursive: true });
      await writeFile(
        join(studio.rootDir, 'machines/approval-check/approval-check.flow.json'),
        JSON.stringify({ specVersion: 1, id: 'approval-check', initial: 'start', states: { start: {} } }, null, 2) + '\n',
      );
      await open(page, studio, 'approval-check');
      await page.locator('[data-testid=empty-hint]').waitFor();

      // Context: orderId, a string defaulting to A1001.
      await page.click('[data-testid=machine-settings]');
      await page.fill('[data-testid=context-fields-new]', 'orderId');
      await page.click('[data-testid=context-fields-add]');
      await page.fill('[aria-label="default of orderId"]', '"A1001"');
      await page.press('[aria-label="default of orderId"]', 'Tab');

      await addState(page, 'lookup');
      await page.selectOption('[data-testid=invoke-kind]', 'tool');
      await page.click('[data-testid=tool-option-query_order]');
      await page.fill('[data-testid=input-mapping-order_id]', 'context.orderId');
      await page.fill('[data-testid=input-mapping-customer_id]', "'c-100'");
      for (const name of ['approved', 'denied', 'timed_out']) await addState(page, name, 'final');
      await expect.poll(() => page.locator('[data-testid=empty-hint]').count()).toBe(0);

      // Drag from a state asks which kind: start --always--> lookup.
      await connectWithDialog(page, '[data-testid=handle-start-out]', 'lookup');
      await page.check('[data-testid=connect-kind-always]');
      await page.click('[data-testid=connect-ok]');
      await page.locator('[data-testid=transition-panel]').waitFor();

      // Drag from the call's done port creates a branch at once; guard the first, the second is the fallback.
      await connect(page, '[data-testid=port-lookup-done]', 'approved');
      await page.locator('[data-testid=transition-panel]').waitFor();
      await page.fill('[data-testid=transition-guard]', 'output.total <= 100');
      await connect(page, '[data-testid=port-lookup-done]', 'denied');
      await expect
        .poll(() => page.locator('[data-testid=edge-lookup-onDone-0]').getAttribute('data-full-label'))
        .toBe('done #1 [output.total <= 100]');
      await expect
        .poll(() => page.locator('[data-testid=edge-lookup-onDone-1]').getAttribute('data-full-label'))
        .toBe('done #2 · fallback');

      // lookup --after 5000--> timed_out, from the dialog.
      await connectWithDialog(page, '[data-testid=handle-lookup-out]', 'timed_out');
      await page.check('[data-testid=connect-kind-after]');
      await page.fill('[data-testid=connect-value]', '5000');
      await page.click('[data-testid=connect-ok]');
      await page.locator('[data-testid="edge-lookup-after-5000-0"]').waitFor();

      // And an event: lookup --CANCEL--> denied (the event is declared on the way).
      await connectWithDialog(page, '[data-testid=handle-lookup-out]', 'denied');
      await page.fill('[data-testid=connect-value]', 'CANCEL');
      await page.press('[data-testid=connect-value]', 'Enter');
      await page.locator('[data-testid="edge-lookup-on-CANCEL-0"]').waitFor();

      // The panel adds a kind too: an onError branch of the call, to denied.
      await page.click('[data-testid=state-lookup]');
      await page.selectOption('[data-testid=new-transition-kind]', 'onError');
      await page.selectOption('[data-testid=new-transition-target]', 'denied');
      await page.click('[data-testid=new-transition-add]');
      await page.locator('[data-testid=edge-lookup-onError-0]').waitFor();

      await page.click('[data-testid=auto-layout]');
      await page.waitForFunction(() => document.querySelectorAll('.edge-label--placed').length === 6, undefined, { timeout: 30_000 });
      await screenshot(page, 'graph-build-approval-check');
      expect(await page.locator('[data-testid=problem-count]').textContent()).toMatch(/^0 errors/);

      await page.click('[data-testid=save]');
      await expect.poll(() => page.locator('[data-testid=dirty-flag]').textContent()).toBe('saved');
      expect(await page.locator('[data-testid=machine-select] option[value="approval-check"]').textContent()).toBe('approval-check');
      await page.click('[data-testid=generate]');
      await page.locator('[data-testid=generated-view]').waitFor({ timeout: 120_000 });
      await expect.poll(() => page.locator('[data-testid=notice]').textContent(), { timeout: 60_000 }).toMatch(/Generated /);
      expect(
        await page.locator('[data-testid=notice]').textContent(),
        (await page.locator('[data-testid=problems-panel]').textContent()) ?? '',
      ).toMatch(/Generated \d file/);

      const dir = join(studio.rootDir, 'machines/approval-check');
      const spec = JSON.parse(await readFile(join(dir, 'approval-check.flow.json'), 'utf8'));
      expect(spec.context).toEqual({ orderId: { type: 'string', default: 'A1001' } });
      expect(spec.states.start).toEqual({ always: 'lookup' });
      expect(spec.states.lookup).toMatchObject({
        invoke: {
          tool: 'query_order',
          input: { order_id: 'context.orderId', customer_id: "'c-100'" },
          onDone: [{ target: 'approved', guard: 'output.total <= 100' }, { target: 'denied' }],
          onError: 'denied',
        },
        after: { '5000': 'timed_out' },
        on: { CANCEL: 'denied' },
      });
      expect(spec.events).toEqual({ CANCEL: {} });
      for (const name of ['approved', 'denied', 'timed_out']) expect(spec.states[name]).toEqual({ type: 'final' });

      // The generated machine, under the runtime, with a counting query_order: both branches.
      const module = (await import(pathToFileURL(join(dir, 'approval-check.machine.ts')).href)) as Record<string, AnyMachineDefinition>;
      const machine = module.approvalCheck!;
      const { tools, counts } = countingTools(machine.tools);
      const runtime = createRuntime({ machines: [machine], store: createMemoryStore(), tools });
      const approved = await runtime.createSession(machine);
      expect(await approved.snapshot()).toMatchObject({ state: 'approved', status: 'done', context: { orderId: 'A1001' } });
      const denied = await runtime.createSession(machine, { orderId: 'A1002' });
      expect(await denied.snapshot()).toMatchObject({ state: 'denied', status: 'done', context: { orderId: 'A1002' } });
      expect(counts.query_order).toBe(2);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 300_000);

  it('shows the contract of a high-risk tool call on the canvas: badges and the approval it needs', async () => {
    const studio = await startStudioServer();
    const { page, errors } = await openPage(browser);
    try {
      await open(page, studio, 'order-support');
      const badges = page.locator('[data-testid=contract-refund] [data-badge]');
      await expect.poll(() => badges.count()).toBe(5);
      const text = Object.fromEntries(await badges.evaluateAll((els) => els.map((el) => [el.getAttribute('data-badge'), el.textContent])));
      expect(text).toEqual({
        timeout: expect.stringContaining('timeout'),
        retries: 'no retry',
        idempotent: 'not idempotent',
        risk: 'high risk',
        approval: 'needs approval',
      });
      expect(await page.locator('[data-testid=contract-refund] [data-badge=approval]').isVisible()).toBe(true);
      expect(await page.locator('[data-testid=invoke-refund]').getAttribute('title')).toContain('order_id ← context.orderId');
      // A low-risk idempotent call with retries shows those instead, and no approval.
      const fetchOrder = await page.locator('[data-testid=contract-fetch_order] [data-badge]').allTextContents();
      expect(fetchOrder).toEqual([expect.stringContaining('timeout'), '2 retries', 'idempotent', 'low risk']);
      await screenshot(page, 'graph-contract-badges');
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 120_000);

  it('updates the machine picker at once when a saved spec gains or loses errors', async () => {
    const studio = await startStudioServer();
    const { page, errors } = await openPage(browser);
    try {
      await open(page, studio, 'order-support');
      const option = page.locator('[data-testid=machine-select] option[value="order-support"]');
      expect(await option.textContent()).toBe('order-support');
      await zoomOutUntilVisible(page, ['[data-testid="edge-fetch_order-onDone-0"]']);
      await page.click('[data-testid="edge-fetch_order-onDone-0"]');
      await page.fill('[data-testid=transition-guard]', 'context.intent == ');
      await page.click('[data-testid=save]');
      await page.locator('[data-testid=notice-save-draft]').click();
      await expect.poll(() => option.textContent()).toBe('order-support (errors)');
      await page.fill('[data-testid=transition-guard]', "context.intent == 'refund'");
      await expect.poll(() => page.locator('[data-testid=problem-count]').textContent()).toMatch(/^0 errors/);
      await page.click('[data-testid=save]');
      await expect.poll(() => page.locator('[data-testid=dirty-flag]').textContent()).toBe('saved');
      await expect.poll(() => option.textContent()).toBe('order-support');
      // The refused save (422 STUDIO_SPEC_INVALID) is logged by the browser; nothing else may be.
      expect(errors.filter((e) => !e.includes('status of 422'))).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 120_000);
});

// "Save as case…" in the studio's Inspect mode (issue 11: record a case from the inspector), in headless Chromium: a
// session run from the studio is written as machines/<id>/cases/<name>.case.jsonl and replays clean with testCase.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime } from '@flowing/runtime';
import { startServer } from '@flowing/runtime/server';
import { parseCase, testCase } from '@flowing/runtime/testing';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { totalCalls, withCountingTools } from '../testing/edited-machine.ts';
import { launchChromium, openPage, screenshot } from './browser.ts';
import { startInspectStudio, type InspectStudio } from './inspect-live-harness.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** Opens the studio on order-support in Inspect mode. */
async function openInspect(page: Page, studio: InspectStudio): Promise<void> {
  await page.goto(`${studio.url}#order-support`);
  await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });
  await page.click('[data-testid=mode-inspect]');
  await page.locator('[data-testid=inspect-start]').waitFor();
}

/** Sends an event through the generated form: picks the type, fills text fields, presses Send. */
async function sendEvent(page: Page, type: string, fields: Record<string, string> = {}): Promise<void> {
  await page.selectOption('[data-testid=inspect-event-type]', type);
  for (const [name, value] of Object.entries(fields)) await page.fill(`[data-testid=event-${type}-${name}]`, value);
  await page.click('[data-testid=inspect-send]');
}

/** Runs an order question from the studio to the end: the answer, then CANCEL into the final state. Returns the id. */
async function runOrderQuestion(page: Page, studio: InspectStudio): Promise<string> {
  await page.click('[data-testid=inspect-start]');
  await page.locator('[data-testid=inspect-stream-state]', { hasText: 'open' }).waitFor({ timeout: 15_000 });
  const sessionId = (await page.locator('.inspect-controls__id').textContent())!;
  const active = () => page.locator('[data-testid=inspect-graph]').getAttribute('data-active');
  await expect.poll(active).toBe('active.idle');
  await sendEvent(page, 'USER_MESSAGE', { text: 'where is my order A1001' });
  await page.locator('[data-testid=inspect-event][data-type="tool.completed"]', { hasText: 'trace_shipment' }).waitFor({ timeout: 15_000 });
  await expect.poll(active, { timeout: 15_000 }).toBe('active.idle');
  await sendEvent(page, 'CANCEL');
  await expect.poll(async () => (await studio.runtime.session(sessionId).snapshot()).status, { timeout: 15_000 }).toBe('done');
  await expect.poll(() => page.locator('[data-testid=inspect-status]').textContent()).toBe('done');
  return sessionId;
}

/** Opens "Save as case…", fills the name and the context keys, presses Save. */
async function saveAsCase(page: Page, name: string, context: string): Promise<void> {
  if (!(await page.locator('[data-testid=save-case-form]').isVisible())) await page.click('[data-testid=save-case]');
  await page.fill('[data-testid=save-case-name]', name);
  await page.fill('[data-testid=save-case-context]', context);
  await page.click('[data-testid=save-case-submit]');
}

/** Errors the page logged, without the browser's line for answers the page expects and shows (409, 400). */
function unexpected(errors: readonly string[]): string[] {
  return errors.filter((e) => !/Failed to load resource: the server responded with a status of (409|400)/.test(e));
}

describe('studio Inspect mode: Save as case', () => {
  it('saves a session run from the studio as a case that replays clean with testCase, and replaces it only after "Replace?"', async () => {
    const studio = await startInspectStudio();
    const { page, errors } = await openPage(browser);
    try {
      await openInspect(page, studio);
      const sessionId = await runOrderQuestion(page, studio);
      expect(studio.counts).toMatchObject({ resolve_user: 1, query_order: 1, trace_shipment: 1 });

      // The form is prefilled with the runtime's default name for the session.
      await page.click('[data-testid=save-case]');
      expect(await page.locator('[data-testid=save-case-name]').inputValue()).toBe(`session-${sessionId.slice(0, 8).toLowerCase()}`);

      await saveAsCase(page, 'studio-order', 'intent, orderId, reply');
      const message = page.locator('[data-testid=save-case-message]');
      await expect.poll(() => message.getAttribute('data-kind'), { timeout: 15_000 }).toBe('saved');
      const file = 'machines/order-support/cases/studio-order.case.jsonl';
      expect(await message.getAttribute('data-file')).toBe(file);
      expect(await message.textContent()).toBe(`Saved ${file} — run flowing test order-support`);
      await screenshot(page, 'studio-save-case-1-saved');

      const path = join(studio.rootDir, file);
      const first = await readFile(path, 'utf8');
      const saved = parseCase(first, file);
      expect(saved.header).toMatchObject({ machineId: 'order-support', name: 'studio-order', specHash: orderSupport.specHash });
      expect(saved.inputs.map((i) => (i.type === 'event' ? i.event.type : i.type))).toEqual(['USER_MESSAGE', 'CANCEL']);
      expect(Object.keys(saved.expect.context).sort()).toEqual(['intent', 'orderId', 'reply']);
      expect(saved.expect.context).toMatchObject({ intent: 'order_query', orderId: 'A1001' });

      // It replays clean against the machine, answered from the recording: no tool runs for real.
      const counted = withCountingTools(orderSupport as never);
      const replay = await testCase(counted.machine, path);
      expect(replay.report).toEqual([]);
      expect(replay.ok).toBe(true);
      expect(totalCalls(counted.calls)).toBe(0);

      // The same name again: the studio asks before replacing; "Keep it" leaves the file as it was.
      await saveAsCase(page, 'studio-order', '');
      const prompt = page.locator('[data-testid=save-case-replace-prompt]');
      await prompt.waitFor({ timeout: 15_000 });
      expect(await prompt.textContent()).toContain(`${file} exists. Replace?`);
      await page.click('[data-testid=save-case-keep]');
      await prompt.waitFor({ state: 'detached' });
      expect(await readFile(path, 'utf8')).toBe(first);

      // Asked again and confirmed: the file is rewritten, now expecting the whole final context.
      const before = await stat(path);
      await saveAsCase(page, 'studio-order', '');
      await prompt.waitFor({ timeout: 15_000 });
      expect(await readFile(path, 'utf8')).toBe(first);
      await page.click('[data-testid=save-case-replace]');
      await expect.poll(() => message.getAttribute('data-replaced'), { timeout: 15_000 }).toBe('true');
      expect(await message.textContent()).toBe(`Replaced ${file} — run flowing test order-support`);
      const second = await readFile(path, 'utf8');
      expect(second).not.toBe(first);
      expect((await stat(path)).ino).not.toBe(before.ino);
      const rewritten = parseCase(second, file);
      expect(rewritten.expect.context).toEqual((await studio.runtime.session(sessionId).snapshot()).context);
      expect((await testCase(counted.machine, path)).report).toEqual([]);
      expect(totalCalls(counted.calls)).toBe(0);
      await screenshot(page, 'studio-save-case-2-replaced');
      expect(unexpected(errors)).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 120_000);

  it("saves a session of a remote flowing serve (URL and token) into the studio's project", async () => {
    const studio = await startInspectStudio();
    const token = 'save-case-remote-token-0123456789';
    const remote = createRuntime({ machines: [orderSupport], store: createMemoryStore() });
    const server = await startServer(remote, {
      port: 0,
      host: '127.0.0.1',
      token,
      corsOrigins: [new URL(studio.url).origin],
      recover: false,
      log: () => {},
    });
    const { page, errors } = await openPage(browser);
    try {
      const session = await remote.createSession('order-support');
      await session.send({ type: 'USER_MESSAGE', text: 'I want a refund for order A1002' });
      await session.send({ type: 'REJECT', reason: 'used item' });
      await openInspect(page, studio);
      await page.click('[data-testid=inspect-connect-remote]');
      await page.fill('[data-testid=inspect-remote-url]', server.url);
      await page.fill('[data-testid=inspect-remote-token]', token);
      await page.click('.inspect-source__form button[type=submit]');
      await page.locator(`[data-testid=inspect-session][data-session-id="${session.id}"]`).click({ timeout: 15_000 });
      expect(await studio.runtime.store.readEvents(session.id, 0).catch(() => [])).toEqual([]);

      await saveAsCase(page, 'remote-refund', 'reply, intent');
      const message = page.locator('[data-testid=save-case-message]');
      await expect.poll(() => message.getAttribute('data-kind'), { timeout: 15_000 }).toBe('saved');
      const path = join(studio.rootDir, 'machines/order-support/cases/remote-refund.case.jsonl');
      const saved = parseCase(await readFile(path, 'utf8'));
      expect(saved.expect.context).toEqual({ reply: 'The refund was not approved: used item', intent: 'refund' });
      const counted = withCountingTools(orderSupport as never);
      expect((await testCase(counted.machine, path)).report).toEqual([]);
      expect(totalCalls(counted.calls)).toBe(0);
      expect(unexpected(errors)).toEqual([]);
    } finally {
      await page.context().close();
      await server.close();
      await studio.close();
    }
  }, 120_000);

  it('shows a refused name with its code and writes nothing', async () => {
    const studio = await startInspectStudio();
    const { page, errors } = await openPage(browser);
    try {
      await openInspect(page, studio);
      await runOrderQuestion(page, studio);
      const casesDir = join(studio.rootDir, 'machines/order-support/cases');
      const before = (await readdir(casesDir)).sort();

      await saveAsCase(page, 'Not A Name', '');
      const message = page.locator('[data-testid=save-case-message]');
      await expect.poll(() => message.getAttribute('data-code'), { timeout: 15_000 }).toBe('SERVER_BAD_REQUEST');
      expect(await message.getAttribute('data-kind')).toBe('error');
      expect(await message.textContent()).toContain('case name');
      // A context key that is not an identifier is the runtime's refusal too.
      await saveAsCase(page, 'fine-name', 'reply, not a key');
      await expect.poll(() => message.textContent(), { timeout: 15_000 }).toContain('context keys');
      expect(await message.getAttribute('data-code')).toBe('SERVER_BAD_REQUEST');
      expect((await readdir(casesDir)).sort()).toEqual(before);
      await screenshot(page, 'studio-save-case-3-refused');
      expect(unexpected(errors)).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 120_000);
});

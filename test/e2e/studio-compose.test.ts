// Machines that compose, in Chromium at 1440x900: machine-invoke blocks that open the child machine, channel badges,
// hand-off targets and branches on the graph; in Inspect mode child sessions nested under their parent, where a child
// ran while stepping through its parent, and channel messages as links between the two sessions.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RuntimeEvent } from '@flowing/runtime';
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
    // An agent that hands off: one onDone branch per target it routes, on output.handoff.to.
    await editJsonFile(join(studio.rootDir, 'machines/desk/desk.flow.json'), (spec) => {
      spec.states.idle.on.HELP = 'triage';
      spec.events.HELP = {};
      spec.states.triage = {
        invoke: {
          llm: 'agent',
          prompt: 'Help with order {{ context.orderId }}',
          handoffs: ['billing', 'ledger'],
          onDone: [{ guard: "output.handoff.to == 'billing'", target: 'billing' }, { target: 'done' }],
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

/** The viewed row of the event list: its seq and type. */
async function viewedEvent(page: Page): Promise<{ seq: number; type: string }> {
  const row = page.locator('[data-testid=inspect-event].inspect-event--viewed');
  await row.waitFor();
  return { seq: Number(await row.getAttribute('data-seq')), type: (await row.getAttribute('data-type'))! };
}

/** Waits until the inspector shows session `id` with its whole log (`lastSeq`) read. */
async function showsSession(page: Page, id: string, lastSeq: number): Promise<void> {
  await page.locator(`[data-testid=session-id][title="session ${id}"]`).waitFor({ timeout: 15_000 });
  await page.locator(`[data-testid=inspect-event-count][data-last-seq="${lastSeq}"]`).waitFor({ timeout: 15_000 });
}

describe('the support-desk example on the graph', () => {
  it('shows its hand-offs, its child machines, the channel support-orders sends on and the one support-billing listens to', async () => {
    const { page, errors } = await openPage();
    try {
      await page.goto(studio.url);
      await openMachine(page, 'support-desk');
      expect(await page.locator('[data-testid=handoffs-triage]').getAttribute('data-targets')).toBe('orders billing');
      const handoffs = await page.locator('.edge-label--handoff').evaluateAll((els) => els.map((el) => el.dataset.handoff).sort());
      expect(handoffs).toEqual(['billing', 'orders']);
      expect(await page.locator('[data-testid=open-machine-orders]').textContent()).toBe('support-orders');
      expect(await page.locator('[data-testid=open-machine-billing]').textContent()).toBe('support-billing');
      // The children's specs arrive after the open; the budget check then reads them, and no problem is left.
      await expect.poll(() => page.locator('[data-testid=problem-count]').textContent(), { timeout: 15_000 }).toMatch(/^0 errors/);
      await screenshot(page, 'compose-support-desk');
      await page.click('[data-testid=open-machine-orders]');
      await page.waitForFunction(() => window.location.hash === '#support-orders');
      await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });
      expect(await page.locator('[data-testid=emits-fetch_order]').getAttribute('data-channels')).toBe('billing.need_order');
      await openMachine(page, 'support-billing');
      const listens = page.locator('[data-testid=machine-listens]');
      expect([await listens.getAttribute('data-patterns'), await listens.getAttribute('data-key')]).toEqual(['billing.*', 'orderId']);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  });
});

describe('composed sessions in Inspect mode', () => {
  it('nests the child under its parent, opens it at the step the parent is at, and links both ends of a channel message', async () => {
    const { runtime, clock } = studio;
    // Two desks on one order, each with its billing child (each must sit under its own parent), each sending a note to
    // the one ledger session of the order (each line must open the other end at its own message).
    const desks = [await runtime.createSession('desk'), await runtime.createSession('desk')];
    await desks[0]!.send({ type: 'START', orderId: 'A1' });
    await desks[1]!.send({ type: 'START', orderId: 'A1' });
    const childOf = async (id: string) => (await runtime.session(id).snapshot()).waitingOn?.sessionId;
    await vi.waitFor(async () => expect(await childOf(desks[0]!.id)).toBeTruthy(), { timeout: 10_000 });
    await vi.waitFor(async () => expect(await childOf(desks[1]!.id)).toBeTruthy(), { timeout: 10_000 });
    const child = (await childOf(desks[0]!.id))!;
    const other = (await childOf(desks[1]!.id))!;
    const sent = (await desks[0]!.events()).find((e) => e.type === 'channel.sent')!;
    const ledgerId = sent.data.to as string;
    await vi.waitFor(async () =>
      expect((await runtime.session(ledgerId).events()).filter((e) => e.type === 'channel.received')).toHaveLength(2),
    );
    // The approval comes a minute later on the runtime's clock: the child's steps before and after it differ in time.
    clock.step(60_000);
    await runtime.session(child).send({ type: 'APPROVE' });
    await vi.waitFor(async () => expect((await runtime.session(desks[0]!.id).snapshot()).status).toBe('done'), { timeout: 10_000 });
    const deskEvents: readonly RuntimeEvent[] = await desks[0]!.events();
    const childEvents: readonly RuntimeEvent[] = await runtime.session(child).events();
    const ledgerEvents: readonly RuntimeEvent[] = await runtime.session(ledgerId).events();

    // The runtime serves ledger, the project no longer has it: a link to its session still draws it on its own graph.
    await rm(join(studio.rootDir, 'machines/ledger'), { recursive: true });
    const { page, errors } = await openPage();
    try {
      await page.goto(`${studio.url}#desk`);
      await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });
      await page.click('[data-testid=mode-inspect]');
      const rows = page.locator('[data-testid=inspect-session]');
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(4);
      const listed = await rows.evaluateAll((els) => els.map((el) => [el.dataset.sessionId, el.dataset.depth, el.dataset.parent]));
      // Newest first, each child right under its own parent; the ledger session (no child of a desk) is not listed.
      expect(listed).toEqual([
        [desks[1]!.id, '0', ''],
        [other, '1', desks[1]!.id],
        [desks[0]!.id, '0', ''],
        [child, '1', desks[0]!.id],
      ]);

      await page.click(`[data-testid=inspect-session][data-session-id="${desks[0]!.id}"]`);
      await showsSession(page, desks[0]!.id, deskEvents.at(-1)!.seq);
      const started = deskEvents.find((e) => e.type === 'machine.started')!;
      const waiting = deskEvents.find((e) => e.type === 'machine.waiting')!;
      const ended = deskEvents.find((e) => e.type === 'machine.done')!;
      const run = page.locator('[data-testid=child-run]');
      expect(await run.getAttribute('data-child')).toBe(child);
      expect([await run.getAttribute('data-from'), await run.getAttribute('data-to')]).toEqual([String(started.seq), String(ended.seq)]);

      // Before the child started: not running there.
      await page.click('[data-testid=inspect-event][data-seq="1"] .inspect-event__line');
      expect(await run.getAttribute('data-active')).toBe('false');
      // The parent waits on its child: the child runs at this step, and opens at its own step of that time.
      await page.click(`[data-testid=inspect-event][data-seq="${waiting.seq}"] .inspect-event__line`);
      expect(await run.getAttribute('data-active')).toBe('true');
      await screenshot(page, 'compose-inspect-parent');
      await run.locator('[data-testid=open-child]').click();
      await showsSession(page, child, childEvents.at(-1)!.seq);
      expect(await page.locator('[data-testid=inspect-session].inspect-session--selected').getAttribute('data-session-id')).toBe(child);
      const atWait = childEvents.filter((e) => e.at <= waiting.at).at(-1)!;
      expect(atWait.data.state).toBe('await_approval');
      expect(await viewedEvent(page)).toEqual({ seq: atWait.seq, type: 'state.changed' });
      expect(atWait.seq).toBeLessThan(childEvents.at(-1)!.seq);
      await screenshot(page, 'compose-inspect-child');

      // The child names its parent (not as a fork) and opens it at the child's time: inside the child's run.
      expect(await page.locator('[data-testid=parent-run]').getAttribute('data-parent')).toBe(desks[0]!.id);
      expect(await page.locator('[data-testid=parent-link]').count()).toBe(0);
      await page.click('[data-testid=open-parent]');
      await showsSession(page, desks[0]!.id, deskEvents.at(-1)!.seq);
      await page.locator('[data-testid=child-run][data-active=true]').waitFor();
      expect((await viewedEvent(page)).seq).toBeLessThan(ended.seq);

      // The message desk sent: its line opens the ledger session at the line where it received it, and back.
      const sentRow = page.locator(`[data-testid=inspect-event][data-seq="${sent.seq}"]`);
      expect(await sentRow.locator('[data-testid=event-link]').getAttribute('data-session')).toBe(ledgerId);
      await sentRow.locator('[data-testid=event-link]').click();
      await showsSession(page, ledgerId, ledgerEvents.at(-1)!.seq);
      const received = ledgerEvents.find((e) => e.type === 'channel.received' && e.data.messageId === sent.data.messageId)!;
      expect(received.seq).toBeLessThan(ledgerEvents.at(-1)!.seq);
      expect(await viewedEvent(page)).toEqual({ seq: received.seq, type: 'channel.received' });
      expect(await page.locator('[data-testid=inspect-graph]').getAttribute('data-active')).toBe('open');
      await page.locator(`[data-testid=inspect-event][data-seq="${received.seq}"] [data-testid=event-link]`).click();
      await showsSession(page, desks[0]!.id, deskEvents.at(-1)!.seq);
      expect(await viewedEvent(page)).toEqual({ seq: sent.seq, type: 'channel.sent' });
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  });
});

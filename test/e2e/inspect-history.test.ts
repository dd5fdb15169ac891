// The Inspect mode's step-through in Chromium: scrubber and keys over a recorded log, the call timeline, fork with a
// pinned context value, session files (export, open by picker or drop, offline), 10,000 events, changed specs,
// hostile files, and `flowing inspect FILE`.
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { specHash } from '@flowing/codegen';
import { createMemoryStore, createRuntime } from '@flowing/runtime';
import { createServer } from '@flowing/runtime/server';
import type { FlowSpec } from '@flowing/spec';
import { inspectCommand } from '../../bin/inspect/inspect.ts';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { cliArgs } from '../helpers/cli.ts';
import { copyProject, REPO_DIR } from '../helpers/project.ts';
import { ARTIFACTS_DIR, launchChromium, openPage, screenshot } from './browser.ts';
import { recordLongSession, withSpecHash } from './inspect-history-files.ts';
import { startInspectStudio, type InspectStudio } from './inspect-live-harness.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

const ORDER_QUESTION = 'where is my order A1001';

/** Opens the studio on order-support in Inspect mode. */
async function openInspect(page: Page, url: string): Promise<void> {
  await page.goto(`${url}#order-support`);
  await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });
  await page.click('[data-testid=mode-inspect]');
  await page.locator('[data-testid=history-panel]').waitFor();
}

/** Picks a session in the list and waits until its whole log (`events` long) is loaded. */
async function selectSession(page: Page, sessionId: string, events: number): Promise<void> {
  await page.locator(`[data-testid=inspect-session][data-session-id="${sessionId}"]`).click({ timeout: 15_000 });
  await expect
    .poll(() => page.locator('[data-testid=inspect-event-count]').getAttribute('data-count'), { timeout: 15_000 })
    .toBe(String(events));
}

const cursorSeq = async (page: Page) => Number(await page.locator('[data-testid=cursor-position]').getAttribute('data-seq'));
const activeStates = (page: Page) => page.locator('[data-testid=inspect-graph]').getAttribute('data-active');
const shownContext = async (page: Page) =>
  JSON.parse((await page.locator('[data-testid=inspect-context]').textContent()) ?? 'null') as unknown;

/** The runtime's own answer for the session at `seq` (its fold of the stored log, over HTTP from the test). */
async function runtimeAt(studio: InspectStudio, sessionId: string, seq: number): Promise<{ activeStates: string[]; context: unknown }> {
  const response = await fetch(`${studio.url}api/runtime/sessions/${sessionId}/at/${seq}`);
  expect(response.status).toBe(200);
  return response.json() as Promise<{ activeStates: string[]; context: unknown }>;
}

/** Every event row the (virtualised) list shows, scrolled through top to bottom: `seq type` strings in order. */
function listedEvents(page: Page): Promise<string[]> {
  return page.evaluate(async () => {
    const scroller = document.querySelector<HTMLElement>('[data-testid=inspect-events]')!;
    const seen = new Map<number, string>();
    const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    scroller.scrollTop = 0;
    await frame();
    for (;;) {
      for (const row of scroller.querySelectorAll<HTMLElement>('[data-testid=inspect-event]'))
        seen.set(Number(row.dataset.seq), row.dataset.type!);
      if (scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 1) break;
      scroller.scrollTop += scroller.clientHeight / 2;
      await frame();
    }
    return [...seen.entries()].sort((a, b) => a[0] - b[0]).map(([seq, type]) => `${seq} ${type}`);
  });
}

/** The graph's highlighted states at every event, stepping from the first with the → key. */
async function highlightsByStep(page: Page, count: number): Promise<string[]> {
  await page.keyboard.press('Home');
  const states: string[] = [];
  for (let i = 0; i < count; i++) {
    if (i > 0) await page.keyboard.press('ArrowRight');
    await expect.poll(() => cursorSeq(page)).toBe(i + 1);
    states.push((await activeStates(page)) ?? '');
  }
  return states;
}

/** Puts a file into the page's drop target the way a drag from the desktop does (dragover, then drop with its bytes). */
async function dropFile(page: Page, name: string, text: string): Promise<void> {
  await page.evaluate(
    ({ name, text }) => {
      const data = new DataTransfer();
      data.items.add(new File([text], name, { type: 'application/x-ndjson' }));
      const target = document.querySelector('[data-testid=history-panel]') ?? document.body;
      target.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
      target.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    },
    { name, text },
  );
}

describe('studio Inspect mode: step through recorded sessions in Chromium', () => {
  it('steps back to event 3: graph and context are those of event 3, with no request and no tool call; a fork from it with an edited context value runs from there', async () => {
    const studio = await startInspectStudio();
    const { page, errors } = await openPage(browser);
    try {
      const session = await studio.runtime.createSession('order-support');
      await session.send({ type: 'USER_MESSAGE', text: ORDER_QUESTION });
      const logLength = (await session.snapshot()).seq;
      await openInspect(page, studio.url);
      await selectSession(page, session.id, logLength);
      await expect.poll(() => activeStates(page)).toBe('active.idle');

      const countsBefore = { ...studio.counts };
      const requests: string[] = [];
      page.on('request', (request) => {
        if (request.method() !== 'GET' || (request.url().includes(`/sessions/${session.id}`) && !request.url().endsWith('/stream'))) {
          requests.push(`${request.method()} ${request.url()}`);
        }
      });

      // Home, then → twice: event 3 (the USER_MESSAGE taking idle to classify).
      await page.locator('[data-testid=cursor-position]').click();
      await page.keyboard.press('Home');
      await expect.poll(() => cursorSeq(page)).toBe(1);
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowRight');
      await expect.poll(() => cursorSeq(page)).toBe(3);
      const at3 = await runtimeAt(studio, session.id, 3);
      expect(at3.activeStates).toEqual(['active.classify']);
      await expect.poll(() => activeStates(page)).toBe(at3.activeStates.join(' '));
      expect(await shownContext(page)).toEqual(at3.context);
      expect(at3.context).toMatchObject({ lastMessage: ORDER_QUESTION });
      expect(await page.locator('[data-testid=history-at]').getAttribute('data-states')).toBe('active.classify');
      await screenshot(page, 'inspect-history-1-event-3');

      // Jumps, the timeline and the buttons move the same cursor, still from the log in memory.
      await page.click('[data-testid=jump-next-tool]');
      await expect.poll(() => page.locator('[data-testid=cursor-position]').getAttribute('data-type')).toBe('tool.started');
      expect(await page.locator('[data-testid=history-pending-calls]').getAttribute('data-count')).toBe('1');
      const traceBar = page.locator('[data-testid=timeline-bar][data-name=trace_shipment]');
      await traceBar.click();
      expect(await cursorSeq(page)).toBe(Number(await traceBar.getAttribute('data-start-index')) + 1);
      expect(await page.locator('[data-testid=call-details]').getAttribute('data-outcome')).toBe('completed');
      expect(await page.locator('[data-testid=call-output]').textContent()).toContain('Leipzig hub');
      for (let i = 0; i < logLength; i++) await page.keyboard.press('ArrowLeft');
      await expect.poll(() => cursorSeq(page)).toBe(1);
      await page.keyboard.press('End');
      await expect.poll(() => cursorSeq(page)).toBe(logLength);
      await page.click('[data-testid=step-first]');
      await page.click('[data-testid=step-forward]');
      await page.click('[data-testid=step-forward]');
      await expect.poll(() => cursorSeq(page)).toBe(3);

      // Nothing was fetched or sent while stepping, and no tool ran.
      expect(requests).toEqual([]);
      expect(studio.counts).toEqual(countsBefore);
      expect((await session.snapshot()).seq).toBe(logLength);

      // Fork at event 3 with the message pinned to a refund request: the fork classifies it anew and waits for approval.
      await page.click('[data-testid=fork-here]');
      const dialog = page.locator('[data-testid=fork-dialog]');
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain('Fork at seq 3');
      expect(await page.inputValue('[data-testid=fork-field-lastMessage]')).toBe(ORDER_QUESTION);
      await page.fill('[data-testid=fork-field-lastMessage]', 'I want a refund for A1002');
      expect(await page.isChecked('[data-testid=fork-pin-lastMessage]')).toBe(true);
      await page.click('[data-testid=fork-submit]');
      await dialog.waitFor({ state: 'detached' });
      const parentLink = page.locator(`[data-testid=parent-link][data-parent="${session.id}"]`);
      await parentLink.waitFor({ timeout: 15_000 });
      expect(await parentLink.getAttribute('data-forked-at')).toBe('3');
      await expect.poll(() => activeStates(page), { timeout: 15_000 }).toBe('active.await_approval');
      const forkId = (await page.locator('.inspect-controls__id').textContent())!;
      expect(forkId).not.toBe(session.id);
      const forkEvents = await studio.runtime.session(forkId).events();
      expect(forkEvents[0]).toMatchObject({ type: 'session.started', data: { parentId: session.id, forkedAt: 3 } });
      const forkStates = forkEvents.filter((e) => e.type === 'state.changed').map((e) => JSON.stringify(e.data.state));
      expect(forkStates[0]).toBe(JSON.stringify({ active: 'classify' }));
      expect(forkStates.at(-1)).toBe(JSON.stringify({ active: 'await_approval' }));
      expect(forkEvents.some((e) => e.type === 'llm.started' && e.data.kind === 'classify')).toBe(true);
      expect(studio.counts.issue_refund).toBe(0);
      // The parent is untouched.
      expect((await session.snapshot()).seq).toBe(logLength);
      await screenshot(page, 'inspect-history-2-forked');
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 180_000);

  it('exports a session, reloads the page and opens the file: the same list and graph states with the runtime unreachable', async () => {
    const studio = await startInspectStudio();
    const { page } = await openPage(browser);
    const dir = await mkdtemp(join(tmpdir(), 'flowing-export-'));
    try {
      const session = await studio.runtime.createSession('order-support');
      await session.send({ type: 'APPROVE' });
      await session.send({ type: 'USER_MESSAGE', text: 'I want a refund for A1002' });
      await session.send({ type: 'APPROVE' });
      const logLength = (await session.snapshot()).seq;
      await openInspect(page, studio.url);
      await selectSession(page, session.id, logLength);
      const liveList = await listedEvents(page);
      expect(liveList).toHaveLength(logLength);
      await page.locator('[data-testid=cursor-position]').click();
      const liveStates = await highlightsByStep(page, logLength);

      const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=export-session]')]);
      expect(download.suggestedFilename()).toBe(`order-support-${session.id}.flowing.jsonl`);
      const file = join(dir, download.suggestedFilename());
      await download.saveAs(file);
      const text = await readFile(file, 'utf8');
      expect(JSON.parse(text.slice(0, text.indexOf('\n')))).toMatchObject({
        kind: 'flowing.session',
        formatVersion: 1,
        sessionId: session.id,
        events: logLength,
      });

      // A fresh page with no runtime: every request to it fails.
      await page.route('**/api/runtime/**', (route) => route.abort('connectionrefused'));
      // The sessions list keeps polling the (unreachable) runtime; nothing may ask it about a session.
      const runtimeRequests: string[] = [];
      page.on('request', (request) => {
        if (request.url().includes('/api/runtime/sessions/')) runtimeRequests.push(request.url());
      });
      await page.reload();
      await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });
      await page.click('[data-testid=mode-inspect]');
      await page.setInputFiles('[data-testid=session-file-input]', file);
      await page.locator(`[data-testid=opened-file][data-session="${session.id}"]`).waitFor();
      await page.locator('[data-testid=offline-view] [data-testid=inspect-graph]').waitFor();
      expect(await page.locator('[data-testid=spec-notice]').count()).toBe(0);
      expect(await listedEvents(page)).toEqual(liveList);
      await page.locator('[data-testid=cursor-position]').click();
      expect(await highlightsByStep(page, logLength)).toEqual(liveStates);
      expect(runtimeRequests).toEqual([]);
      // The refused APPROVE is on the file's timeline of jumps too.
      await page.keyboard.press('Home');
      await page.click('[data-testid=jump-next-rejection]');
      expect(await page.locator('[data-testid=cursor-position]').getAttribute('data-type')).toBe('transition.rejected');
      await page.locator('[data-testid=timeline-bar][data-kind=approval]').click();
      expect(await page.locator('[data-testid=call-details]').getAttribute('data-outcome')).toBe('approved');
      await screenshot(page, 'inspect-history-3-offline-file');
    } finally {
      await page.context().close();
      await studio.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('loads a 10,000-event session file and scrubs it (time to first render and per step, from Performance API marks)', async () => {
    const long = await recordLongSession(10_000);
    expect(long.events).toBeGreaterThanOrEqual(10_000);
    const studio = await startInspectStudio();
    const { page, errors } = await openPage(browser);
    try {
      await openInspect(page, studio.url);
      await page.setInputFiles('[data-testid=session-file-input]', {
        name: 'long.flowing.jsonl',
        mimeType: 'application/x-ndjson',
        buffer: Buffer.from(long.text),
      });
      await expect
        .poll(() => page.locator('[data-testid=history-panel]').getAttribute('data-events'), { timeout: 30_000 })
        .toBe(String(long.events));
      await page.locator('[data-testid=offline-view] [data-testid=inspect-graph]').waitFor();
      await expect.poll(() => page.evaluate(() => performance.getEntriesByName('flowing:inspect:file-render').length)).toBe(1);
      const firstRenderMs = await page.evaluate(() => performance.getEntriesByName('flowing:inspect:file-render')[0]!.duration);

      // Steps: real key presses at both ends and in the middle, each measured from the key to the frame that shows it.
      const steps = 60;
      await page.locator('[data-testid=cursor-position]').click();
      await page.keyboard.press('Home');
      await expect.poll(() => cursorSeq(page)).toBe(1);
      const stepTimes = async (key: string, count: number): Promise<number[]> => {
        await page.evaluate(() => performance.clearMeasures('flowing:inspect:step'));
        for (let i = 0; i < count; i++) {
          await page.keyboard.press(key);
          await expect.poll(() => page.evaluate(() => performance.getEntriesByName('flowing:inspect:step').length)).toBe(i + 1);
        }
        return page.evaluate(() => performance.getEntriesByName('flowing:inspect:step').map((e) => e.duration));
      };
      const nearStart = await stepTimes('ArrowRight', steps);
      await page.keyboard.press('End');
      await expect.poll(() => cursorSeq(page)).toBe(long.events);
      const nearEnd = await stepTimes('ArrowLeft', steps);
      const scrubber = page.locator('[data-testid=scrubber]');
      await scrubber.fill(String(Math.floor(long.events / 2)));
      await expect.poll(() => cursorSeq(page)).toBe(Math.floor(long.events / 2) + 1);
      const middle = await stepTimes('ArrowRight', steps);
      const all = [...nearStart, ...nearEnd, ...middle].sort((a, b) => a - b);
      const median = all[Math.floor(all.length / 2)]!;
      const p95 = all[Math.floor(all.length * 0.95)]!;
      const figures = {
        events: long.events,
        fileBytes: Buffer.byteLength(long.text),
        firstRenderMs: Math.round(firstRenderMs),
        stepMs: { median: Number(median.toFixed(1)), p95: Number(p95.toFixed(1)), max: Number(all.at(-1)!.toFixed(1)), steps: all.length },
      };
      console.log(`[inspect-history] 10,000-event file: ${JSON.stringify(figures)}`);
      await mkdir(ARTIFACTS_DIR, { recursive: true });
      await writeFile(join(ARTIFACTS_DIR, 'inspect-history-figures.json'), `${JSON.stringify(figures, null, 2)}\n`);
      await screenshot(page, 'inspect-history-4-10k');
      // Bounds for a shared 2-core machine; the figures above are the result.
      expect(firstRenderMs).toBeLessThan(10_000);
      expect(median).toBeLessThan(250);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 300_000);

  it('opens a file from another version of the machine with a notice and no graph; hostile files get a coded error and the studio keeps working', async () => {
    const studio = await startInspectStudio();
    const { page, errors } = await openPage(browser);
    try {
      const session = await studio.runtime.createSession('order-support');
      await session.send({ type: 'USER_MESSAGE', text: ORDER_QUESTION });
      const exported = await (await fetch(`${studio.url}api/runtime/sessions/${session.id}/export`)).text();
      const spec = JSON.parse(await readFile(join(studio.rootDir, 'machines/order-support/order-support.flow.json'), 'utf8')) as FlowSpec;
      const olderHash = specHash({ ...spec, description: `${spec.description ?? ''} (before the last edit)` });
      await openInspect(page, studio.url);

      await dropFile(page, 'older.flowing.jsonl', withSpecHash(exported, olderHash));
      const notice = page.locator('[data-testid=spec-notice]');
      await notice.waitFor();
      expect(await notice.getAttribute('data-code')).toBe('INSPECT_SPEC_CHANGED');
      expect(await notice.textContent()).toContain(olderHash.slice(0, 12));
      // The list and the scrubber work; the graph is not drawn at all.
      expect(await page.locator('[data-testid=offline-view]').count()).toBe(1);
      expect(await page.locator('[data-testid=inspect-graph]').count()).toBe(0);
      expect((await listedEvents(page)).length).toBe((await session.snapshot()).seq);
      await page.click('[data-testid=step-first]');
      expect(await cursorSeq(page)).toBe(1);
      await screenshot(page, 'inspect-history-5-spec-changed');

      // The same file with its own hash draws the graph (the notice is about the hash, nothing else).
      await dropFile(page, 'same.flowing.jsonl', exported);
      await page.locator('[data-testid=offline-view] [data-testid=inspect-graph]').waitFor();
      expect(await notice.count()).toBe(0);

      const lines = exported.split('\n');
      const hostile: Array<[string, string, string]> = [
        ['truncated.jsonl', exported.slice(0, Math.floor(exported.length * 0.6)), 'INSPECT_FILE_TRUNCATED'],
        ['cut-at-line.jsonl', `${lines.slice(0, 6).join('\n')}\n`, 'INSPECT_FILE_TRUNCATED'],
        [
          'spec.json',
          await readFile(join(studio.rootDir, 'machines/order-support/order-support.flow.json'), 'utf8'),
          'INSPECT_FILE_WRONG_KIND',
        ],
        ['kind.jsonl', exported.replace('"kind":"flowing.session"', '"kind":"flowing.case"'), 'INSPECT_FILE_WRONG_KIND'],
        ['binary.jsonl', '\u0000\u0001PK\u0003\u0004\n\u00ff\u00fe', 'INSPECT_FILE_NOT_JSON'],
        ['empty.jsonl', '', 'INSPECT_FILE_EMPTY'],
      ];
      for (const [name, text, code] of hostile) {
        await page.setInputFiles('[data-testid=session-file-input]', { name, mimeType: 'application/x-ndjson', buffer: Buffer.from(text) });
        await expect.poll(() => page.locator('[data-testid=history-error]').getAttribute('data-code'), { timeout: 10_000 }).toBe(code);
        // The file shown before stays shown, whole.
        expect(await page.locator('[data-testid=opened-file]').getAttribute('data-session')).toBe(session.id);
        await page.click('[data-testid=history-error] button');
      }
      await screenshot(page, 'inspect-history-6-hostile');
      // Still working: the session list, selecting a runtime session, stepping, the editor.
      await selectSession(page, session.id, (await session.snapshot()).seq);
      await page.click('[data-testid=step-first]');
      expect(await cursorSeq(page)).toBe(1);
      await page.click('[data-testid=mode-edit]');
      await page.locator('[data-testid=state-idle]').waitFor();
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 180_000);

  it('flowing inspect FILE starts the studio on the project and opens it on the file; a file that is not a session is refused with its code', async () => {
    const long = await recordLongSession(60);
    const copy = await copyProject('flowing-inspect-cli-');
    const file = join(copy.dir, 'refund.flowing.jsonl');
    await writeFile(file, long.text);
    await writeFile(join(copy.dir, 'notes.jsonl'), '{"kind":"notes"}\n');
    const refused = spawnSync(process.execPath, cliArgs('inspect', 'notes.jsonl', '--port', '0'), {
      cwd: copy.dir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('INSPECT_FILE_WRONG_KIND');
    const missing = spawnSync(process.execPath, cliArgs('inspect', 'nothing-here.jsonl'), {
      cwd: copy.dir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('INSPECT_FILE_NOT_FOUND');
    const help = spawnSync(process.execPath, cliArgs('--help'), { cwd: REPO_DIR, encoding: 'utf8', timeout: 60_000 });
    expect(help.stdout).toMatch(/inspect \[options\] <file>/);

    // The project's runtime, as `flowing studio` mounts it, on a memory store (nothing is written to the project).
    const specs = { 'order-support': JSON.parse(await readFile(join(copy.dir, 'machines/order-support/order-support.flow.json'), 'utf8')) };
    const runtimeServer = createServer(createRuntime({ machines: [orderSupport], store: createMemoryStore() }), { specs, log: () => {} });
    const runtimeApp = { fetch: runtimeServer.fetch, close: async () => runtimeServer.dispose() };
    const cwd = process.cwd();
    process.chdir(copy.dir);
    let started: Awaited<ReturnType<typeof inspectCommand>>;
    try {
      started = await inspectCommand('refund.flowing.jsonl', { port: '0', host: '127.0.0.1', appDir: inject('studioAppDir'), runtimeApp });
    } finally {
      process.chdir(cwd);
    }
    const { page, errors } = await openPage(browser);
    try {
      expect(started).toBeDefined();
      const { pageUrl } = started!;
      expect(pageUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?inspect=%2Fapi%2Finspect-file%2F[A-Za-z0-9_-]{24}#order-support$/);
      const served = decodeURIComponent(new URL(pageUrl).searchParams.get('inspect')!);
      expect(await (await fetch(new URL(served, pageUrl))).text()).toBe(long.text);
      expect((await fetch(new URL('/api/inspect-file/AAAAAAAAAAAAAAAAAAAAAAAA', pageUrl))).status).toBe(404);
      await page.goto(pageUrl);
      await page.locator('[data-testid=opened-file]').waitFor({ timeout: 30_000 });
      await expect.poll(() => page.locator('[data-testid=history-panel]').getAttribute('data-events')).toBe(String(long.events));
      await page.locator('[data-testid=offline-view] [data-testid=inspect-graph]').waitFor();
      expect(await page.locator('[data-testid=opened-file]').textContent()).toContain('refund.flowing.jsonl');
      await page.locator('[data-testid=cursor-position]').click();
      await page.keyboard.press('Home');
      await page.keyboard.press('ArrowRight');
      await expect.poll(() => activeStates(page)).toBe('active.idle');
      await screenshot(page, 'inspect-history-7-cli');
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await started?.studio.close();
      await copy.remove();
    }
  }, 180_000);
});

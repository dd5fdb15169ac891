// "New machine" and "Delete machine" in the studio, in Chromium, against the server `flowing studio` runs.
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStudioServer } from '../helpers/studio-server.ts';
import { launchChromium, openPage, screenshot } from './browser.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

const machineOptions = (page: Page) =>
  page
    .locator('[data-testid=machine-select] option')
    .evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value).filter(Boolean));

/** Types an id into the dialog and returns the inline error's code (undefined when there is none). */
async function tryId(page: Page, id: string): Promise<string | undefined> {
  await page.getByLabel('Machine id').fill(id);
  const error = page.locator('[data-testid=new-machine-error]');
  return (await error.count()) > 0 ? ((await error.getAttribute('data-code')) ?? undefined) : undefined;
}

describe('New machine and Delete machine in Chromium', () => {
  it('creates a machine with one initial state, refusing bad ids inline with their code; adds a state, saves and generates it', async () => {
    const studio = await startStudioServer();
    const { page, errors } = await openPage(browser);
    try {
      await page.goto(studio.url);
      await page.locator('[data-testid=machine-select] option[value="order-support"]').waitFor({ state: 'attached' });
      await page.getByRole('button', { name: 'New machine' }).click();
      const dialog = page.getByRole('dialog', { name: 'New machine' });
      await dialog.waitFor();
      const create = dialog.getByRole('button', { name: 'Create' });

      for (const [id, code] of [
        ['Returns-Desk', 'SPEC_INVALID_ID'],
        ['../returns', 'SPEC_INVALID_ID'],
        ['returns_desk', 'SPEC_INVALID_ID'],
        ['returns-', 'SPEC_INVALID_ID'],
        ['r'.repeat(65), 'SPEC_INVALID_ID'],
        ['class', 'SPEC_RESERVED_NAME'],
        ['constructor', 'SPEC_RESERVED_NAME'],
        ['order-support', 'STUDIO_MACHINE_EXISTS'],
      ] as const) {
        expect(await tryId(page, id), id).toBe(code);
        expect(await dialog.textContent()).toContain(`(${code})`);
        expect(await create.isDisabled(), id).toBe(true);
      }
      await screenshot(page, 'machines-1-refused-id');
      expect(await tryId(page, 'returns-desk')).toBeUndefined();
      await create.click();

      // The new machine is open, alone in its canvas with its one initial state, and saved on disk.
      await expect.poll(() => page.inputValue('[data-testid=machine-select]'), { timeout: 30_000 }).toBe('returns-desk');
      await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });
      await page.locator('[data-testid=state-idle]').waitFor();
      expect(await page.locator('.react-flow__node').count()).toBe(1);
      expect(await machineOptions(page)).toContain('returns-desk');
      const specFile = join(studio.rootDir, 'machines/returns-desk/returns-desk.flow.json');
      const created = JSON.parse(await readFile(specFile, 'utf8'));
      expect(created).toMatchObject({ id: 'returns-desk', initial: 'idle' });
      expect(Object.keys(created.states)).toEqual(['idle']);
      await screenshot(page, 'machines-2-created');

      // Edit it like any machine: add a state, save, generate.
      await page.click('[data-testid=add-state]');
      await page.locator('[data-testid=state-panel]').waitFor();
      await page.fill('[data-testid=state-name-input]', 'closed');
      await page.press('[data-testid=state-name-input]', 'Enter');
      await page.locator('[data-testid=state-closed]').waitFor();
      await page.click('[data-testid=save]');
      await expect.poll(() => page.locator('[data-testid=dirty-flag]').textContent()).toBe('saved');
      expect(Object.keys(JSON.parse(await readFile(specFile, 'utf8')).states).sort()).toEqual(['closed', 'idle']);
      await page.click('[data-testid=generate]');
      await page.locator('[data-testid=generated-view]').waitFor({ timeout: 90_000 });
      await expect
        .poll(() => existsSync(join(studio.rootDir, 'machines/returns-desk/returns-desk.machine.ts')), { timeout: 30_000 })
        .toBe(true);
      expect(existsSync(join(studio.rootDir, 'machines/returns-desk/returns-desk.registry.ts'))).toBe(true);
      expect(await readFile(join(studio.rootDir, 'machines/returns-desk/returns-desk.machine.ts'), 'utf8')).toContain('closed');
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 240_000);

  it('deletes the open machine only after confirming in a dialog: spec and generated files go, a hand-written impl.ts stays', async () => {
    const studio = await startStudioServer();
    const { page, errors } = await openPage(browser);
    const dir = join(studio.rootDir, 'machines/order-support');
    try {
      await writeFile(join(dir, 'order-support.impl.ts'), '// hand-written guards\n', { flag: 'a' });
      const implBefore = await readFile(join(dir, 'order-support.impl.ts'), 'utf8');
      const filesBefore = (await readdir(dir)).sort();
      expect(filesBefore).toEqual(
        expect.arrayContaining(['order-support.flow.json', 'order-support.machine.ts', 'order-support.registry.ts']),
      );
      page.on('dialog', (native) => {
        errors.push(`native dialog: ${native.message()}`);
        void native.dismiss();
      });

      await page.goto(`${studio.url}#order-support`);
      await page.waitForFunction(() => document.body.dataset.canvasReady !== undefined, undefined, { timeout: 30_000 });

      // "Delete machine" sits in the machine panel (shown while nothing is selected). Cancel first: nothing happens.
      await page.getByRole('button', { name: 'Delete machine' }).click();
      const dialog = page.getByRole('alertdialog', { name: 'Delete machine' });
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain('order-support.impl.ts stays');
      await screenshot(page, 'machines-3-delete-dialog');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect((await readdir(dir)).sort()).toEqual(filesBefore);

      // Confirm: the files go, the list no longer has the machine, the editor is empty, the notice names what stayed.
      await page.getByRole('button', { name: 'Delete machine' }).click();
      await dialog.getByRole('button', { name: 'Delete' }).click();
      await dialog.waitFor({ state: 'detached' });
      await expect.poll(() => machineOptions(page)).not.toContain('order-support');
      // Recorded regression cases (cases/) are the team's, like the impl: deleting the machine keeps them.
      expect((await readdir(dir)).sort()).toEqual(['cases', 'order-support.impl.ts']);
      expect(await readFile(join(dir, 'order-support.impl.ts'), 'utf8')).toBe(implBefore);
      expect(await page.locator('[data-testid=notice]').textContent()).toContain(
        'Kept (hand-written): machines/order-support/cases, machines/order-support/order-support.impl.ts',
      );
      expect(await page.locator('.react-flow__node').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Delete machine' }).count()).toBe(0);
      await screenshot(page, 'machines-4-deleted');
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await studio.close();
    }
  }, 180_000);
});

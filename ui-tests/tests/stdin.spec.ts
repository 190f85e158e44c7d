import {
  expect,
  galata,
  IJupyterLabPageFixture,
  test
} from '@jupyterlab/galata';
import { Page } from '@playwright/test';

import { cellPrompt, cellText, notebookWithCells } from './helpers';

/** A prompt still waiting: answered ones stay a moment, soft-hidden. */
const WAITING_INPUT =
  '.jp-OutputArea-stdin-item:not(.jp-OutputArea-stdin-hiding) .jp-Stdin-input';

/** Run cell `index` with Ctrl+Enter, staying on it and not waiting for it. */
async function runInPlace(
  page: IJupyterLabPageFixture,
  index: number
): Promise<void> {
  await page.notebook.selectCells(index);
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+Enter');
}

/** The sources of the open notebook's cells, as its model holds them. */
async function sources(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const panel = window.galata.app.shell.currentWidget as any;
    const cells = panel.content.model.sharedModel.cells as {
      getSource(): string;
    }[];
    return cells.map(cell => cell.getSource());
  });
}

/** Wait for the next waiting prompt to take the focus, then answer it. */
async function answer(page: Page, text: string): Promise<void> {
  await expect(page.locator(WAITING_INPUT)).toBeFocused();
  await page.keyboard.insertText(text);
  await page.keyboard.press('Enter');
}

test.describe('input() in the stdin box of JupyterLab', () => {
  test('the box sits in the output area and every key goes into it', async ({
    page
  }) => {
    const source =
      "said = input('Say something:')\nprint(len(said), said[-3:])";
    await notebookWithCells(page, source);
    await runInPlace(page, 0);

    const cell = page.locator('.jp-CodeCell').first();
    const item = cell.locator('.jp-OutputArea .jp-OutputArea-stdin-item');
    await expect(item.locator('.jp-Stdin .jp-Stdin-prompt')).toContainText(
      'Say something:'
    );
    const box = item.locator('.jp-Stdin-input');
    await expect(box).toBeFocused();
    await expect(box).not.toHaveAttribute('type', 'password');

    // Letters bound to notebook commands in command mode (a, b, d, m, x, y, z…)
    // must type text, not insert, cut or change cells.
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    for (const letter of letters) {
      await page.keyboard.press(`Key${letter.toUpperCase()}`);
    }
    for (const letter of letters) {
      await page.keyboard.press(`Shift+Key${letter.toUpperCase()}`);
    }
    for (const digit of '0123456789') {
      await page.keyboard.press(`Digit${digit}`);
    }
    const typed = letters + letters.toUpperCase() + '0123456789';
    await expect(box).toHaveValue(typed);
    await page.keyboard.press('Enter');

    await expect.poll(() => cellText(page, 0)).toContain('62 789');
    await expect(cell.locator('.jp-Stdin')).toHaveCount(0);
    // The answer is echoed as JupyterLab echoes it, in a stdin stream output.
    expect(await cellText(page, 0)).toContain(`Say something: ${typed}`);
    expect(await sources(page)).toEqual([source]);
  });

  test('a password box masks what is typed and its echo', async ({ page }) => {
    await notebookWithCells(
      page,
      "import getpass\npw = getpass.getpass('Password:')\nprint('length', len(pw))"
    );
    await runInPlace(page, 0);
    const box = page.locator(WAITING_INPUT);
    await expect(box).toHaveAttribute('type', 'password');
    await answer(page, 'hunter22');

    await expect.poll(() => cellText(page, 0)).toContain('length 8');
    const text = await cellText(page, 0);
    expect(text).toContain('Password: ········');
    expect(text).not.toContain('hunter22');
  });

  test('an ipdb session: commands, input history and its search', async ({
    page
  }) => {
    await notebookWithCells(page, '1 / 0', '%debug');
    await runInPlace(page, 0);
    await expect.poll(() => cellText(page, 0)).toContain('ZeroDivisionError');
    await runInPlace(page, 1);

    const prompt = page.locator(
      '.jp-OutputArea-stdin-item:not(.jp-OutputArea-stdin-hiding) .jp-Stdin-prompt'
    );
    await expect(prompt).toContainText('ipdb>');
    await answer(page, 'p 6 * 7');
    await expect.poll(() => cellText(page, 1)).toContain('42');
    for (const command of ['foofoo', 'barbar', 'bazbaz']) {
      await answer(page, command);
      await expect
        .poll(() => cellText(page, 1))
        .toContain(`name '${command}' is not defined`);
    }

    // Up and Down walk the history, newest first.
    const box = page.locator(WAITING_INPUT);
    await expect(box).toBeFocused();
    await page.keyboard.press('ArrowUp');
    await expect(box).toHaveValue('bazbaz');
    await page.keyboard.press('ArrowUp');
    await expect(box).toHaveValue('barbar');
    await page.keyboard.press('ArrowDown');
    await expect(box).toHaveValue('bazbaz');
    await page.keyboard.press('Enter');
    const bazbazFailed = "name 'bazbaz' is not defined";
    await expect
      .poll(async () => (await cellText(page, 1)).split(bazbazFailed).length)
      .toBe(3);

    // In the next prompt, Ctrl+Up searches the history backwards for what is
    // typed so far, and leaves the cursor at the end.
    await expect(box).toBeFocused();
    await page.keyboard.insertText('foo');
    await page.keyboard.press('Control+ArrowUp');
    await expect(box).toHaveValue('foofoo');
    await page.keyboard.insertText('x');
    await expect(box).toHaveValue('foofoox');

    await box.fill('');
    await answer(page, 'q');
    await expect.poll(() => cellPrompt(page, 1)).toBe('[2]:');
    await expect(page.locator('.jp-Stdin')).toHaveCount(0);
    expect(await cellText(page, 1)).toContain('ipdb>  p 6 * 7');
  });

  test('keys pressed right after an answer do not reach the notebook', async ({
    page
  }) => {
    const source =
      "from time import sleep\ninput()\nprint('before sleep')\nsleep(0.5)\nprint('after sleep')";
    await notebookWithCells(page, source);
    await runInPlace(page, 0);
    await expect(page.locator(WAITING_INPUT)).toBeFocused();

    await page.keyboard.press('x');
    await page.keyboard.press('Enter');
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press('Enter');
    }

    await expect.poll(() => cellText(page, 0)).toContain('after sleep');
    await expect.poll(() => cellPrompt(page, 0)).toBe('[1]:');
    expect(await sources(page)).toEqual([source]);
    const cell = page.locator('.jp-CodeCell').first();
    await expect(cell.locator('.jp-RenderedText').first()).toHaveText('x');
  });
});

test.describe('input() with a capped number of outputs', () => {
  const CAP = 4;
  test.use({
    mockSettings: {
      ...galata.DEFAULT_SETTINGS,
      '@jupyterlab/notebook-extension:tracker': {
        ...galata.DEFAULT_SETTINGS['@jupyterlab/notebook-extension:tracker'],
        maxNumberOutputs: CAP
      }
    }
  });

  // As in JupyterLab ("Don't limit cell outputs if input is requested", its
  // notebook-max-outputs test): the outputs before a prompt all show while it waits.
  test('the prompt shows below all the outputs before it; later ones are trimmed', async ({
    page
  }) => {
    await notebookWithCells(
      page,
      [
        'from IPython.display import Markdown, display',
        "_ = [display(Markdown(f'*before {i}*')) for i in range(8)]",
        "age = input('Your age:')",
        "_ = [display(Markdown(f'*after {i}*')) for i in range(8)]"
      ].join('\n')
    );
    await runInPlace(page, 0);

    const cell = page.locator('.jp-CodeCell').first();
    await expect(cell.locator('.jp-Stdin')).toContainText('Your age:');
    await expect(cell.locator('.jp-RenderedMarkdown')).toHaveCount(8);
    await expect(cell.locator('.jp-TrimmedOutputs')).toHaveCount(0);

    await answer(page, '42');
    await expect(cell.locator('.jp-RenderedText').first()).toHaveText(
      'Your age: 42'
    );
    await expect.poll(() => cellPrompt(page, 0)).toBe('[1]:');
    // Every output up to the answer shows; those after it are trimmed again.
    await expect(cell.locator('.jp-RenderedMarkdown')).toHaveCount(8);
    await expect(cell.locator('.jp-TrimmedOutputs')).toHaveCount(1);
  });
});

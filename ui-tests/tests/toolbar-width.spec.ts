import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

const TOOLBAR = '.jp-NotebookPanel-toolbar';
const ASSISTANT = 'jupyter-loop-assistant';

test.use({ viewport: { width: 1024, height: 768 } });

/** The names of the notebook toolbar's items, and of those moved into its "⋯" pop-up. */
async function placement(
  page: IJupyterLabPageFixture
): Promise<{ toolbar: string[]; popup: string[] }> {
  // The toolbar measures its items and moves what does not fit into the pop-up
  // throttled, 500 ms after a resize: let it settle.
  await page.waitForTimeout(1500);
  return page.evaluate(selector => {
    const names = (nodes: Iterable<Element>) =>
      Array.from(nodes).map(
        node => (node as HTMLElement).dataset.jpItemName ?? ''
      );
    const toolbar = document.querySelector(selector)!;
    return {
      toolbar: names(toolbar.children),
      popup: names(
        document.querySelectorAll('.jp-Toolbar-responsive-popup > *')
      )
    };
  }, TOOLBAR);
}

test('at 1024 px the assistant button stays in the notebook toolbar', async ({
  page
}) => {
  await page.notebook.createNew();
  await page.sidebar.openTab('filebrowser');
  await expect(
    page.locator(`${TOOLBAR} [data-jp-item-name="${ASSISTANT}"]`)
  ).toHaveCount(1);
  let placed = await placement(page);
  expect(placed.toolbar).toContain(ASSISTANT);

  // With a panel open on the right too (here the assistant's own), the notebook
  // is about 440 px wide: the button must not be the first item to go into "⋯".
  await page.sidebar.openTab(ASSISTANT);
  placed = await placement(page);
  expect(placed.popup).not.toContain(ASSISTANT);
  expect(placed.toolbar).toContain(ASSISTANT);
  await page.sidebar.close('right');
  const button = page.locator(
    `${TOOLBAR} > [data-jp-item-name="${ASSISTANT}"] jp-button`
  );
  await expect(button).toBeVisible();
  await button.click();
  await expect(page.locator('.jp-Loop-AgentPanel')).toBeVisible();
});

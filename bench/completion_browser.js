/**
 * The browser half of bench/completion.py: opens a notebook in JupyterLab
 * (Debian's chromium, headless), types in its second cell once per marker
 * given, and prints, per marker, when (epoch milliseconds, this machine's
 * clock) ghost text holding that marker entered the page. The bench compares
 * these times with when the scripted model server sent its first token.
 *
 *   node bench/completion_browser.js <notebook URL> <marker>...
 *
 * Typed text is `<marker> = df["pr`, in one input event (one request after the
 * inline completer's debounce); the scripted answer is `ice_<marker>"]`. Run
 * by bench/completion.py, not on its own.
 */
const path = require('path');

const playwright = require.resolve('@playwright/test', {
  paths: [path.join(__dirname, '..', 'ui-tests')]
});
const { chromium } = require(playwright);

/** Milliseconds for an answer's stream to end (five events, 50 ms apart). */
const SETTLE_MS = 400;

async function main() {
  const [url, ...markers] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run']
  });
  try {
    const page = await browser.newPage();
    await page.goto(url);
    // The kernel is up: the inline completer is bound to the notebook's
    // editors anew when its session changes.
    await page.waitForFunction(
      () => {
        const panel = window.jupyterapp?.shell.currentWidget;
        const kernel = panel?.sessionContext?.session?.kernel;
        return panel?.context?.isReady && kernel?.status === 'idle';
      },
      null,
      { timeout: 120000 }
    );
    const editor = page
      .locator('.jp-NotebookPanel .jp-Cell')
      .nth(1)
      .locator('.cm-content');
    for (const marker of markers) {
      await editor.click();
      await page.evaluate(watchFor, marker);
      // Empty the cell, then type (the inline completer does not ask when a
      // selection is replaced; an empty line asks nothing).
      await page.keyboard.press('Control+a');
      await page.keyboard.press('Backspace');
      await page.keyboard.insertText(`${marker} = df["pr`);
      const shownAt = await page.evaluate(() => window.__loopGhost);
      console.log(JSON.stringify({ marker, shown_at: shownAt }));
      await page.waitForTimeout(SETTLE_MS); // the answer's stream ends
    }
  } finally {
    await browser.close();
  }
}

/** In the page: note when the ghost text of the marker's answer appears. */
function watchFor(marker) {
  const answer = `ice_${marker}"]`;
  window.__loopGhost = new Promise(resolve => {
    const shown = () =>
      [...document.querySelectorAll('.jp-GhostText')].some(node =>
        node.textContent.includes(answer)
      );
    const observer = new MutationObserver(() => {
      if (shown()) {
        const at = performance.timeOrigin + performance.now();
        observer.disconnect();
        resolve(at);
      }
    });
    observer.observe(document.body, {
      childList: true,
      subtree: true,
      characterData: true
    });
    setTimeout(() => {
      observer.disconnect();
      resolve(null);
    }, 10000);
  });
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});

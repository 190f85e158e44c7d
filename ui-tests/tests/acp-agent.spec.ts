import { expect, Page, test } from '@playwright/test';

import { ask, cells, ModelServer, openAssistant } from './agent-helpers';
import { cellText } from './helpers';
import { OwnServer } from './own-server';

/**
 * An ACP agent hosted by the server (the scripted one,
 * jupyter_loop/testing/acp_agent.py, a real process speaking ACP), picked in the
 * panel: it reads a cell's error through jupyter-loop's MCP endpoint, proposes a fix
 * (the card on the cell, accepted here), runs the cell only once approved here, and
 * finishes its turn while the tab is closed: the tab opened again shows the end.
 *
 * The scripted agent does what its prompt says, a command a line.
 */
const PATH = 'acp.ipynb';

function script(...lines: string[]): string {
  return lines.join('\n');
}

function mcp(tool: string, args: { [key: string]: unknown }): string {
  return `mcp ${tool} ${JSON.stringify({ path: PATH, ...args })}`;
}

async function openNotebook(page: Page, server: OwnServer): Promise<void> {
  await page.goto(`${server.url}/lab/tree/${PATH}`, {
    waitUntil: 'domcontentloaded'
  });
  await page.locator('.jp-NotebookPanel .jp-CodeCell').first().waitFor();
}

test('an ACP agent picked in the panel: reads the error, proposes a fix, runs after approval, ends with the tab closed', async ({
  browser
}) => {
  test.setTimeout(240000);
  const server = new OwnServer({ env: { LOOP_UI_ACP_AGENT: 'scripted' } });
  server.writeNotebook(PATH, ['1 / 0']);
  await server.start();
  try {
    let page = await browser.newPage();
    await openNotebook(page, server);
    await expect(page.locator('#jp-main-statusbar')).toContainText('Idle', {
      timeout: 60000
    });
    await page.evaluate(() =>
      (window as any).jupyterapp.commands.execute('notebook:run-all-cells')
    );
    await expect.poll(() => cellText(page, 0)).toContain('ZeroDivisionError');

    const panel = await openAssistant(page);
    const picker = panel.getByRole('combobox', { name: 'Agent' });
    await expect(picker).toBeVisible();
    await picker.selectOption('scripted');

    // First turn: it reads the error through our MCP endpoint and proposes a fix.
    await ask(
      page,
      script(
        mcp('read_cell', { cell_id: 'c0' }),
        mcp('propose_modify', {
          cell_id: 'c0',
          source: '1 / 1',
          summary: 'divide by one'
        })
      )
    );
    const said = panel.locator('.jp-Loop-Message.jp-mod-assistant');
    await expect(said.first()).toContainText('ZeroDivisionError', {
      timeout: 60000
    });
    const stop = panel.getByRole('button', { name: 'Stop the assistant' });
    await expect(stop).toHaveCount(0, { timeout: 60000 });

    // Its proposal is the card on the cell: accepted here.
    const proposal = cells(page).nth(0).locator('.jp-Loop-CellProposal');
    await expect(proposal).toBeVisible();
    await proposal.getByRole('button', { name: 'Accept' }).click();
    await expect(proposal).toHaveCount(0);

    // Second turn: it runs the cell, which waits for the approval card; allowed here.
    await ask(
      page,
      script(
        mcp('run_cells', { cell_ids: ['c0'], wait_seconds: 90 }),
        'sleep 6',
        'say finished while the tab was closed'
      )
    );
    const approval = page.locator('.jp-Loop-CellApproval');
    await expect(approval).toBeVisible({ timeout: 60000 });
    await approval.getByRole('button', { name: 'Allow once' }).click();
    await expect
      .poll(() => cellText(page, 0), { timeout: 60000 })
      .toContain('1.0');

    // The tab closes mid-turn (the agent still sleeps); the turn goes on on the server.
    await page.close();
    await new Promise(resolve => setTimeout(resolve, 8000));
    page = await browser.newPage();
    await openNotebook(page, server);
    const again = await openAssistant(page);
    await expect(
      again.locator('.jp-Loop-Message.jp-mod-assistant').last()
    ).toContainText('finished while the tab was closed', { timeout: 60000 });
    expect(await cellText(page, 0)).not.toContain('ZeroDivisionError');
    await page.close();
  } finally {
    await server.dispose();
  }
});

/**
 * The same with real ACP agents from the registry, each one's model the scripted model
 * server: the tool calls are scripted, the agent is real. Qwen Code (`npm install
 * @qwen-code/qwen-code`, LOOP_UI_QWEN=its `qwen`) asks permission for each call of our
 * MCP tools; Codex (`npm install @zed-industries/codex-acp`, LOOP_UI_CODEX=its
 * `codex-acp`, on the server's Responses API) names our tools in a namespace of its own
 * (`mcp__jupyter_loop`) and asks permission for the run only. Either way: the panel's
 * approval cards.
 */
const REAL_AGENTS = [
  {
    name: 'qwen',
    label: 'Qwen Code',
    variable: 'LOOP_UI_QWEN',
    tools: 'mcp__jupyter-loop__',
    delay: 8
  },
  {
    name: 'codex',
    label: 'Codex',
    variable: 'LOOP_UI_CODEX',
    tools: 'mcp__jupyter_loop__',
    // The Responses API streams more events than chat completions, each one delayed.
    delay: 3
  }
];

for (const agent of REAL_AGENTS) {
  test(`${agent.label} picked in the panel: reads the error, proposes a fix, runs after approval, ends with the tab closed`, async ({
    browser
  }) => {
    test.skip(
      !process.env[agent.variable],
      `${agent.variable} names no ${agent.name} command`
    );
    test.setTimeout(300000);
    const server = new OwnServer({
      env: {
        LOOP_UI_ACP_AGENT: 'scripted',
        [agent.variable]: process.env[agent.variable]!
      }
    });
    server.writeNotebook(PATH, ['1 / 0']);
    await server.start();
    try {
      const model = ModelServer.of(String(server.port));
      await model.reset();
      let page = await browser.newPage();
      await openNotebook(page, server);
      await expect(page.locator('#jp-main-statusbar')).toContainText('Idle', {
        timeout: 60000
      });
      await page.evaluate(() =>
        (window as any).jupyterapp.commands.execute('notebook:run-all-cells')
      );
      await expect.poll(() => cellText(page, 0)).toContain('ZeroDivisionError');
      const panel = await openAssistant(page);
      await panel
        .getByRole('combobox', { name: 'Agent' })
        .selectOption(agent.name);
      // Answer every approval card of the panel (the agent's permission requests, as the
      // approval policy asks for them, and our endpoint's run of a cell) until `done`.
      const allowingUntil = async (done: () => Promise<boolean>) => {
        let allowed = 0;
        const deadline = Date.now() + 120000;
        while (!(await done())) {
          expect(Date.now()).toBeLessThan(deadline);
          const allow = panel
            .locator('.jp-Loop-Approval')
            .getByRole('button', { name: 'Allow once' });
          if ((await allow.count()) > 0) {
            await allow.first().click({ timeout: 5000 });
            allowed += 1;
          }
          await page.waitForTimeout(300);
        }
        return allowed;
      };

      await model.script(
        {
          tool_calls: [
            {
              name: `${agent.tools}read_cell`,
              arguments: { path: PATH, cell_id: 'c0' }
            }
          ]
        },
        {
          tool_calls: [
            {
              name: `${agent.tools}propose_modify`,
              arguments: {
                path: PATH,
                cell_id: 'c0',
                source: '1 / 1',
                summary: 'divide by one'
              }
            }
          ]
        },
        { text: 'It divides by zero; I proposed 1 / 1.' }
      );
      await ask(page, 'Why does the first cell fail?');
      const proposal = cells(page).nth(0).locator('.jp-Loop-CellProposal');
      await allowingUntil(async () => (await proposal.count()) > 0);
      await expect(
        panel.locator('.jp-Loop-Message.jp-mod-assistant').last()
      ).toContainText('I proposed 1 / 1', { timeout: 90000 });
      await expect(proposal).toBeVisible();
      await proposal.getByRole('button', { name: 'Accept' }).click();
      await expect(proposal).toHaveCount(0);
      await expect(
        panel.getByRole('button', { name: 'Stop the assistant' })
      ).toHaveCount(0, { timeout: 60000 });

      await model.script(
        {
          tool_calls: [
            {
              name: `${agent.tools}run_cells`,
              arguments: { path: PATH, cell_ids: ['c0'], wait_seconds: 90 }
            }
          ]
        },
        {
          text: 'finished while the tab was closed',
          delay: agent.delay,
          chunk_size: 200
        }
      );
      await ask(page, 'Run it.');
      // The run waits for an approval given here (at least our endpoint's, on the cell).
      const allowed = await allowingUntil(async () =>
        (await cellText(page, 0)).includes('1.0')
      );
      expect(allowed).toBeGreaterThan(0);

      await page.close();
      await new Promise(resolve => setTimeout(resolve, 12000));
      page = await browser.newPage();
      await openNotebook(page, server);
      const again = await openAssistant(page);
      await expect(
        again.locator('.jp-Loop-Message.jp-mod-assistant').last()
      ).toContainText('finished while the tab was closed', { timeout: 90000 });
      await page.close();
    } finally {
      await server.dispose();
    }
  });
}

import { expect, Locator, Page, test } from '@playwright/test';

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

async function pick(panel: Locator, agent: string): Promise<void> {
  await panel.getByRole('combobox', { name: 'Agent' }).selectOption(agent);
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
 * The agent's own permission request (`session/request_permission`) is the panel's
 * approval card in the agent's words, not a request to run cells; and a server restart
 * between two turns: the next turn reopens the session with `session/load` (the scripted
 * agent keeps its sessions on disk) and the conversation says so; an agent that cannot
 * load one (the same agent keeping nothing) starts anew, and the conversation says that.
 */
test('an ACP agent asks permission in its words on the card; after a server restart its session is loaded (or, kept by none, said to be new)', async ({
  browser
}) => {
  test.setTimeout(240000);
  const server = new OwnServer({ env: { LOOP_UI_ACP_AGENT: 'scripted' } });
  server.writeNotebook(PATH, ['1 + 1']);
  await server.start();
  // One browser context for both servers: its cookie keeps the person the same (a
  // session is one person's; another person's turn opens a session of their own).
  const context = await browser.newContext();
  try {
    let page = await context.newPage();
    await openNotebook(page, server);
    let panel = await openAssistant(page);
    await pick(panel, 'scripted');
    await ask(page, script('permission Rewrite cell 1', 'say asked'));
    const card = panel.locator('.jp-Loop-Approval');
    await expect(card).toHaveAttribute(
      'aria-label',
      /^Scripted ACP agent for .+ asks permission$/,
      { timeout: 60000 }
    );
    await expect(card).toContainText(
      'Scripted ACP agent asks to: Rewrite cell 1'
    );
    await expect(card).toContainText('Options: Always allow, Allow');
    await expect(card).not.toContainText('cells');
    await card.getByRole('button', { name: 'Allow once' }).click();
    const said = panel.locator('.jp-Loop-Message.jp-mod-assistant');
    await expect(said.last()).toContainText('permission: yes', {
      timeout: 60000
    });
    await pick(panel, 'forgetful');
    await ask(page, 'say hello');
    await expect(said.last()).toContainText('hello', { timeout: 60000 });
    await page.close();

    await server.stop();
    await server.start();
    page = await context.newPage();
    await openNotebook(page, server);
    panel = await openAssistant(page);
    await pick(panel, 'scripted');
    await ask(page, 'recall');
    await expect(panel).toContainText(
      'The server restarted: Scripted ACP agent loaded its earlier session and goes on with it.',
      { timeout: 60000 }
    );
    await expect(
      panel.locator('.jp-Loop-Message.jp-mod-assistant').last()
    ).toContainText('remembered: permission Rewrite cell 1', {
      timeout: 60000
    });
    await pick(panel, 'forgetful');
    await ask(page, 'recall');
    await expect(panel).toContainText(
      'The server restarted: Forgetful ACP agent started a new session: it does not remember the earlier turns of this conversation.',
      { timeout: 60000 }
    );
    await expect(
      panel.locator('.jp-Loop-Message.jp-mod-assistant').last()
    ).toContainText('remembered: nothing', { timeout: 60000 });
  } finally {
    await context.close();
    await server.dispose();
  }
});

/**
 * The same with real ACP agents from the registry, each one's model the scripted model
 * server: the tool calls are scripted, the agent is real. Qwen Code (`npm install
 * @qwen-code/qwen-code`, LOOP_UI_QWEN=its `qwen`) asks permission for our MCP tools that
 * change something (not for `read_cell`, which our endpoint marks read-only): the panel's
 * card, in Qwen's words. Codex (`npm install @zed-industries/codex-acp`,
 * LOOP_UI_CODEX=its `codex-acp`, on the server's Responses API) names our tools in a
 * namespace of its own (`mcp__jupyter_loop`) and asks permission for the run only. Then a
 * server restart: the next turn loads the agent's session (`session/load`) and says so.
 */
const REAL_AGENTS = [
  {
    name: 'qwen',
    label: 'Qwen Code',
    variable: 'LOOP_UI_QWEN',
    tools: 'mcp__jupyter-loop__',
    asksToPropose: true,
    delay: 8
  },
  {
    name: 'codex',
    label: 'Codex',
    variable: 'LOOP_UI_CODEX',
    tools: 'mcp__jupyter_loop__',
    asksToPropose: false,
    // The Responses API streams more events than chat completions, each one delayed.
    delay: 3
  }
];

for (const agent of REAL_AGENTS) {
  test(`${agent.label} picked in the panel: reads the error, proposes a fix, runs after approval, ends with the tab closed, resumes after a restart`, async ({
    browser
  }) => {
    test.skip(
      !process.env[agent.variable],
      `${agent.variable} names no ${agent.name} command`
    );
    test.setTimeout(420000);
    const server = new OwnServer({
      env: {
        LOOP_UI_ACP_AGENT: 'scripted',
        [agent.variable]: process.env[agent.variable]!
      }
    });
    server.writeNotebook(PATH, ['1 / 0']);
    await server.start();
    // One browser context throughout: its cookie keeps the person the same across the
    // restart (a session is one person's).
    const context = await browser.newContext();
    try {
      let model = ModelServer.of(String(server.port));
      await model.reset();
      let page = await context.newPage();
      await openNotebook(page, server);
      await expect(page.locator('#jp-main-statusbar')).toContainText('Idle', {
        timeout: 60000
      });
      await page.evaluate(() =>
        (window as any).jupyterapp.commands.execute('notebook:run-all-cells')
      );
      await expect.poll(() => cellText(page, 0)).toContain('ZeroDivisionError');
      let panel = await openAssistant(page);
      await pick(panel, agent.name);
      const stop = () =>
        panel.getByRole('button', { name: 'Stop the assistant' });
      // Answer every approval card of the panel (Qwen's permission requests, and our
      // endpoint's run of a cell) until `done`.
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
      if (agent.asksToPropose) {
        // The agent's permission request for the proposal: the card says who asks, what.
        const card = panel.locator('.jp-Loop-Approval');
        await expect(card).toHaveAttribute(
          'aria-label',
          new RegExp(`^${agent.label} for .+ asks permission$`),
          { timeout: 90000 }
        );
        await expect(card).toContainText(`${agent.label} asks to:`);
        await expect(card).toContainText('propose_modify');
        await card.getByRole('button', { name: 'Allow once' }).click();
      }
      await expect(
        panel.locator('.jp-Loop-Message.jp-mod-assistant').last()
      ).toContainText('I proposed 1 / 1', { timeout: 90000 });
      await expect(proposal).toBeVisible();
      await proposal.getByRole('button', { name: 'Accept' }).click();
      await expect(proposal).toHaveCount(0);
      await expect(stop()).toHaveCount(0, { timeout: 60000 });

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
      // The run waits for approvals given here: the agent's, then our endpoint's on the cell.
      const allowed = await allowingUntil(async () =>
        (await cellText(page, 0)).includes('1.0')
      );
      expect(allowed).toBeGreaterThan(0);

      // The tab closes mid-turn (the model's last reply is seconds away); it ends on the server.
      await page.close();
      await new Promise(resolve => setTimeout(resolve, 12000));
      page = await context.newPage();
      await openNotebook(page, server);
      panel = await openAssistant(page);
      await expect(
        panel.locator('.jp-Loop-Message.jp-mod-assistant').last()
      ).toContainText('finished while the tab was closed', { timeout: 90000 });
      await expect(stop()).toHaveCount(0, { timeout: 60000 });
      await page.close();

      // A server restart: the agent's process ends with it; the next turn loads its session.
      await server.stop();
      await server.start();
      model = ModelServer.of(String(server.port));
      await model.script({ text: 'Still here after the restart.' });
      page = await context.newPage();
      await openNotebook(page, server);
      panel = await openAssistant(page);
      await pick(panel, agent.name);
      await ask(page, 'Are you still there?');
      await expect(panel).toContainText(
        `The server restarted: ${agent.label} loaded its earlier session and goes on with it.`,
        { timeout: 90000 }
      );
      await expect(
        panel.locator('.jp-Loop-Message.jp-mod-assistant').last()
      ).toContainText('Still here after the restart.', { timeout: 90000 });
      // The agent remembers: the model is sent the earlier turns with the new question.
      const requests = await model.modelRequests();
      const sent = JSON.stringify(requests[requests.length - 1].body);
      expect(sent).toContain('Why does the first cell fail?');
      expect(sent).toContain('Are you still there?');
    } finally {
      await context.close();
      await server.dispose();
    }
  });
}

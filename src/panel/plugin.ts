import {
  ILabShell,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Dialog, ICommandPalette, showDialog } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { IStatusBar } from '@jupyterlab/statusbar';
import { Signal } from '@lumino/signaling';
import * as React from 'react';

import { sessionOfPanel } from '../agent/panels';
import { AgentService } from '../agent/service';
import { CompletionUsage } from '../completion/usage';
import { requestAPI } from '../request';
import { ServerFigures } from '../serverfigures';
import { ICompletionUsage, IAgentService } from '../tokens';
import { IServerStatus } from '../payloads';
import { askIcon, assistantIcon } from './icons';
import { JournalTable } from './journal';
import { AgentPanel, PANEL_ID } from './panel';
import { OutputsStatus } from './status';

/** Command ids of the assistant. */
export namespace CommandIDs {
  export const openPanel = 'jupyter-loop:open-panel';
  export const askAboutCell = 'jupyter-loop:ask-about-cell';
  export const stopTurn = 'jupyter-loop:stop-turn';
  export const acceptAll = 'jupyter-loop:accept-all-proposals';
  export const rejectAll = 'jupyter-loop:reject-all-proposals';
  export const showJournal = 'jupyter-loop:show-journal';
}

const CATEGORY = 'AI Assistant';

/**
 * The AI assistant's side panel (right side bar), its commands (palette,
 * notebook toolbar, cell toolbar and context menu: see schema/agent-panel.json)
 * and the status-bar note that outputs are kept on the server. The panel's
 * foot shows what inline completions cost, when that plugin is there.
 */
export const panelPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-loop:agent-panel',
  description: 'The AI assistant side panel and its commands.',
  autoStart: true,
  requires: [IAgentService, INotebookTracker, IRenderMimeRegistry],
  optional: [ICommandPalette, IStatusBar, ILabShell, ICompletionUsage],
  activate: (
    app: JupyterFrontEnd,
    service: AgentService,
    tracker: INotebookTracker,
    rendermime: IRenderMimeRegistry,
    palette: ICommandPalette | null,
    statusBar: IStatusBar | null,
    labShell: ILabShell | null,
    completionUsage: CompletionUsage | null
  ): void => {
    const contents = app.serviceManager.contents;
    const reveal = (panel: NotebookPanel, cellId: string): void => {
      const notebook = panel.content;
      const index = notebook.widgets.findIndex(c => c.model.id === cellId);
      if (index < 0) {
        return;
      }
      app.shell.activateById(panel.id);
      notebook.activeCellIndex = index;
      void notebook.scrollToCell(notebook.widgets[index], 'center');
    };
    // The day's token budget: completions spend it too, so their landing asks again.
    const budget = new ServerFigures<IServerStatus>(() =>
      requestAPI<IServerStatus>('status')
    );
    completionUsage?.changed.connect(() => budget.refreshSoon());
    const panel = new AgentPanel({
      service,
      tracker,
      rendermime,
      contents,
      onReveal: reveal,
      completionUsage,
      budget
    });
    app.shell.add(panel, 'right', { rank: 600 });

    const currentSession = () => {
      const current = tracker.currentWidget;
      return current ? sessionOfPanel(service, current, contents) : null;
    };
    const lastTurnId = () =>
      currentSession()?.conversation.turns().slice(-1)[0]?.turnId ?? null;
    const lastTurnHasProposals = (...states: string[]): boolean => {
      const turnId = lastTurnId();
      const proposals = turnId
        ? currentSession()?.proposals.forTurn(turnId)
        : undefined;
      return !!proposals?.some(p => states.includes(p.state));
    };

    app.commands.addCommand(CommandIDs.openPanel, {
      label: 'Open AI Assistant',
      caption: 'Talk with the AI assistant about this notebook',
      icon: assistantIcon,
      execute: () => {
        app.shell.activateById(PANEL_ID);
        panel.focusInput();
      }
    });
    app.commands.addCommand(CommandIDs.askAboutCell, {
      label: 'Ask AI About This Cell',
      caption: 'Ask the AI assistant about this cell (puts it in focus)',
      icon: askIcon,
      isEnabled: () => tracker.currentWidget !== null,
      execute: () => {
        const current = tracker.currentWidget;
        const session = currentSession();
        if (!current || !session) {
          return;
        }
        const notebook = current.content;
        const selected = notebook.widgets
          .filter(cell => notebook.isSelectedOrActive(cell))
          .map(cell => cell.model.id);
        session.addFocus(selected);
        app.shell.activateById(PANEL_ID);
        panel.focusInput();
      }
    });
    app.commands.addCommand(CommandIDs.stopTurn, {
      label: 'Stop the AI Assistant',
      isEnabled: () => !!currentSession()?.conversation.isBusy,
      execute: () => currentSession()?.stop()
    });
    app.commands.addCommand(CommandIDs.acceptAll, {
      label: 'Accept All AI Proposals of the Last Turn',
      isEnabled: () => lastTurnHasProposals('pending'),
      execute: () => {
        const turnId = lastTurnId();
        return turnId
          ? currentSession()?.proposalActions.acceptAll(turnId)
          : undefined;
      }
    });
    app.commands.addCommand(CommandIDs.rejectAll, {
      label: 'Reject All AI Proposals of the Last Turn',
      isEnabled: () => lastTurnHasProposals('pending', 'stale'),
      execute: () => {
        const turnId = lastTurnId();
        return turnId
          ? currentSession()?.proposalActions.rejectAll(turnId)
          : undefined;
      }
    });
    app.commands.addCommand(CommandIDs.showJournal, {
      label: 'Show the AI Assistant’s Journal',
      caption:
        'Everything the assistant did on this notebook, and who allowed it',
      isEnabled: () => tracker.currentWidget !== null,
      execute: async () => {
        const session = currentSession();
        if (!session) {
          return;
        }
        try {
          const { entries } = await service.client.journal(session.path);
          await showDialog({
            title: 'AI assistant journal',
            body: React.createElement(JournalTable, {
              entries,
              displayName: name => service.displayName(name)
            }),
            buttons: [Dialog.okButton({ label: 'Close' })]
          });
        } catch (error) {
          service.report(error, 'The journal could not be loaded');
        }
      }
    });
    if (palette) {
      for (const command of [
        CommandIDs.openPanel,
        CommandIDs.askAboutCell,
        CommandIDs.stopTurn,
        CommandIDs.acceptAll,
        CommandIDs.rejectAll,
        CommandIDs.showJournal
      ]) {
        palette.addItem({ command, category: CATEGORY });
      }
    }

    if (statusBar) {
      const isNotebook = () =>
        !!tracker.currentWidget &&
        (labShell ? labShell.currentWidget === tracker.currentWidget : true);
      const activeChanged = new Signal<AgentPanel, void>(panel);
      labShell?.currentChanged.connect(() => activeChanged.emit());
      tracker.currentChanged.connect(() => activeChanged.emit());
      statusBar.registerStatusItem('jupyter-loop:outputs-status', {
        item: new OutputsStatus(),
        align: 'left',
        rank: 5,
        isActive: isNotebook,
        activeStateChanged: activeChanged
      });
    }
  }
};

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';

import { AgentsAtWork } from './agents';
import { FocusPublisher, focusOf } from './focus';

export const presencePlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-loop:presence',
  description:
    'Tells the others in a notebook which cell you have in hand, and shows agents at work on cells.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_: JupyterFrontEnd, tracker: INotebookTracker): void => {
    tracker.widgetAdded.connect((_, panel) => {
      const focus = new FocusPublisher(
        () => panel.model?.sharedModel.awareness,
        () => focusOf(panel.content)
      );
      const changed = () => focus.changed();
      panel.content.activeCellChanged.connect(changed);
      panel.content.selectionChanged.connect(changed);
      void panel.context.ready.then(() => focus.publish());
      const agents = new AgentsAtWork(panel);
      panel.disposed.connect(() => {
        focus.dispose();
        agents.dispose();
      });
    });
  }
};

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Dialog } from '@jupyterlab/apputils';
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { ConnectionErrorCloser } from './closer';

/** Closes "Server Connection Error" once the server answers again (see closer.ts). */
export const connectionPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-loop:connection-error-closer',
  description:
    'Closes the Server Connection Error dialog once the server answers again.',
  autoStart: true,
  optional: [ITranslator],
  activate: (app: JupyterFrontEnd, translator: ITranslator | null): void => {
    // The title JupyterLab gives the dialog, in the page's language.
    const title = (translator ?? nullTranslator)
      .load('jupyterlab')
      .__('Server Connection Error');
    const settings = app.serviceManager.serverSettings;
    const closer = new ConnectionErrorCloser({
      answers: async () => {
        const url = URLExt.join(settings.baseUrl, 'api', 'status');
        const response = await ServerConnection.makeRequest(url, {}, settings);
        return response.ok;
      },
      close: () => {
        Dialog.tracker.forEach(dialog => {
          const header = dialog.node.querySelector('.jp-Dialog-header');
          if (header?.textContent?.trim() === title) {
            dialog.reject(); // as its Close button does
          }
        });
      }
    });
    app.serviceManager.connectionFailure.connect(() => closer.failed());
  }
};

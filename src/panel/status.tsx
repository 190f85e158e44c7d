import { ReactWidget } from '@jupyterlab/ui-components';
import * as React from 'react';

import { serverIcon } from './icons';

/**
 * A status-bar note that this notebook's outputs are kept on the server, so
 * closing the tab loses nothing.
 */
export class OutputsStatus extends ReactWidget {
  constructor() {
    super();
    this.addClass('jp-Loop-OutputsStatus');
    this.node.title =
      'Cells run on the server: outputs keep arriving and are saved even when ' +
      'this tab is closed, and every tab sees them.';
  }

  protected render(): JSX.Element {
    return (
      <span className="jp-Loop-OutputsStatus-text" role="status">
        <serverIcon.react tag="span" className="jp-Loop-OutputsStatus-icon" />
        Outputs kept on the server
      </span>
    );
  }
}

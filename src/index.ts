import { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { agentPlugin } from './agent/plugin';
import { completionPlugin } from './completion/plugin';
import { connectionPlugin } from './connection/plugin';
import { executorPlugin, markersPlugin } from './execution/plugin';
import { panelPlugin } from './panel/plugin';
import { presencePlugin } from './presence/plugin';
import { cellHistoryPlugin } from './history/plugin';
import { proposalsPlugin } from './proposals/plugin';

const plugins: JupyterFrontEndPlugin<unknown>[] = [
  executorPlugin,
  markersPlugin,
  agentPlugin,
  panelPlugin,
  proposalsPlugin,
  completionPlugin,
  cellHistoryPlugin,
  presencePlugin,
  connectionPlugin
];

export default plugins;

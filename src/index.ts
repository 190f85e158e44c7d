import { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { executorPlugin, markersPlugin } from './execution/plugin';

const plugins: JupyterFrontEndPlugin<unknown>[] = [
  executorPlugin,
  markersPlugin
];

export default plugins;

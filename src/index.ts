import { JupyterFrontEndPlugin } from '@jupyterlab/application';

const plugins: JupyterFrontEndPlugin<unknown>[] = [];

export default plugins;

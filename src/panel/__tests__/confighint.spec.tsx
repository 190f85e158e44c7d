import { ReactWidget } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import packageInfo from '../../../package.json';
import {
  CONFIGURATION_PAGE,
  ConfigHint,
  REPOSITORY,
  SETUP_COMMAND
} from '../header';

const HINT =
  'No model provider is configured. Set OPENAI_API_KEY (or ' +
  'c.JupyterLoopApp.openai_api_key) for OpenAI; OLLAMA_HOST for Ollama.';

describe('ConfigHint', () => {
  let widget: ReactWidget | null = null;

  afterEach(() => {
    widget?.dispose();
    widget = null;
  });

  async function shown(): Promise<HTMLElement> {
    widget = ReactWidget.create(<ConfigHint hint={HINT} />);
    Widget.attach(widget, document.body);
    await widget.renderPromise;
    return widget.node;
  }

  it('says its heading once', async () => {
    const text = (await shown()).textContent ?? '';
    expect(text.split('No model provider is configured.').length - 1).toBe(1);
  });

  it('gives one line to copy and links the configuration page', async () => {
    const node = await shown();
    const command = node.querySelector('.jp-Loop-ConfigHint-command');
    expect(command?.textContent).toBe(SETUP_COMMAND);
    const link = node.querySelector('a');
    expect(link?.getAttribute('href')).toBe(CONFIGURATION_PAGE);
    // The server's whole hint, folded away.
    expect(node.querySelector('details')?.textContent).toContain(
      'c.JupyterLoopApp.openai_api_key'
    );
  });

  it('links the repository package.json names', () => {
    expect(packageInfo.repository.url.replace(/\.git$/, '')).toBe(REPOSITORY);
  });
});

import { LabIcon } from '@jupyterlab/ui-components';

/** The speech bubble the assistant's icons share. */
const BUBBLE =
  '<path class="jp-icon3" fill="#616161" d="M4 3h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9.4L5 20.6V17H4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2zm0 2v10h3v1.4L8.6 15H20V5H4z"/>';

/** The AI assistant: a speech bubble with a spark. */
export const assistantIcon = new LabIcon({
  name: 'jupyter-loop:assistant',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  ${BUBBLE}
  <path class="jp-icon-brand0" fill="#1976D2" d="M12 6.2l1.1 2.6 2.7 1.1-2.7 1.1L12 13.6l-1.1-2.6-2.7-1.1 2.7-1.1z"/>
</svg>`
});

/** Ask about a cell: a bubble with a question mark. */
export const askIcon = new LabIcon({
  name: 'jupyter-loop:ask',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  ${BUBBLE}
  <path class="jp-icon3" fill="#616161" d="M12 6a2.6 2.6 0 0 0-2.6 2.4h1.6a1 1 0 1 1 1.6.8c-.8.5-1.4 1-1.4 2v.4h1.6v-.3c0-.4.2-.6.7-1A2.6 2.6 0 0 0 12 6zm-.8 6.6h1.6v1.6h-1.6z"/>
</svg>`
});

/** Outputs kept on the server: a small server stack. */
export const serverIcon = new LabIcon({
  name: 'jupyter-loop:server',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <path class="jp-icon3" fill="#616161" d="M4 4h16v6H4zm2 2v2h2V6zm-2 8h16v6H4zm2 2v2h2v-2z"/>
</svg>`
});

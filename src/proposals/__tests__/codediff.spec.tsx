import * as React from 'react';
import { act } from 'react';

import { CodeDiff } from '../codediff';

// react-dom ships no types here (no @types/react-dom); the two calls used are typed below.
interface IRoot {
  render(element: React.ReactNode): void;
  unmount(): void;
}
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { createRoot } = require('react-dom/client') as {
  createRoot: (host: Element) => IRoot;
};

// React 18 warns about act() outside a test environment unless told.
(globalThis as any).IS_REACT_ACT_ENVIRONMENT = true;

describe('CodeDiff', () => {
  let host: HTMLDivElement;
  let root: IRoot;

  beforeEach(() => {
    host = document.createElement('div');
    document.body.appendChild(host);
    root = createRoot(host);
  });

  afterEach(() => {
    act(() => root.unmount());
    host.remove();
  });

  function show(original: string, modified: string): void {
    act(() =>
      root.render(
        <CodeDiff
          original={original}
          modified={modified}
          mimeType="text/x-ipython"
          languages={null}
          label="AI proposal"
        />
      )
    );
  }

  function linesOf(selector: string): string[] {
    return Array.from(host.querySelectorAll(selector)).map(
      node => node.textContent ?? ''
    );
  }

  it('shows a new cell as added lines only, with no removed line', () => {
    show('', 'import math\nprint(math.pi)');
    expect(linesOf('.cm-deletedLine')).toEqual([]);
    expect(linesOf('.cm-line.cm-changedLine')).toEqual([
      'import math',
      'print(math.pi)'
    ]);
  });

  it('still shows the removed and added lines of an edit', () => {
    show('x = 1\ny = 2', 'x = 1\ny = 3');
    expect(linesOf('.cm-deletedLine')).toEqual(['y = 2']);
    expect(linesOf('.cm-line.cm-changedLine')).toEqual(['y = 3']);
  });
});

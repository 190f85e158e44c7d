import { syntaxHighlighting } from '@codemirror/language';
import { unifiedMergeView } from '@codemirror/merge';
import { Compartment, EditorState } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import {
  IEditorLanguageRegistry,
  jupyterHighlightStyle,
  jupyterTheme
} from '@jupyterlab/codemirror';
import * as React from 'react';

/**
 * A read-only CodeMirror merge view of a cell's source: the proposed text with
 * deletions and insertions marked inline, highlighted like the cell itself
 * (JupyterLab's editor theme, so light and dark themes follow).
 */
export function CodeDiff(props: {
  original: string;
  modified: string;
  mimeType: string;
  languages: IEditorLanguageRegistry | null;
  label: string;
}): JSX.Element {
  const host = React.useRef<HTMLDivElement>(null);
  const { original, modified, mimeType, languages, label } = props;
  React.useEffect(() => {
    if (!host.current) {
      return;
    }
    const language = new Compartment();
    const view = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: modified,
        extensions: [
          EditorState.readOnly.of(true),
          EditorView.editable.of(false),
          EditorView.lineWrapping,
          jupyterTheme,
          syntaxHighlighting(jupyterHighlightStyle),
          language.of([]),
          unifiedMergeView({
            original,
            mergeControls: false,
            gutter: true,
            syntaxHighlightDeletions: true,
            collapseUnchanged: { margin: 3, minSize: 6 }
          }),
          EditorView.contentAttributes.of({ 'aria-label': label })
        ]
      })
    });
    let alive = true;
    languages
      ?.getLanguage(mimeType)
      .then(found => {
        if (alive && found?.support) {
          view.dispatch({ effects: language.reconfigure(found.support) });
        }
      })
      .catch(() => undefined);
    return () => {
      alive = false;
      view.destroy();
    };
  }, [original, modified, mimeType, languages, label]);
  return <div ref={host} className="jp-Loop-CodeDiff" />;
}

import { syntaxHighlighting } from '@codemirror/language';
import { unifiedMergeView } from '@codemirror/merge';
import {
  Compartment,
  EditorState,
  Extension,
  RangeSetBuilder
} from '@codemirror/state';
import { Decoration, EditorView } from '@codemirror/view';
import {
  IEditorLanguageRegistry,
  jupyterHighlightStyle,
  jupyterTheme
} from '@jupyterlab/codemirror';
import * as React from 'react';

const addedLine = Decoration.line({ class: 'cm-changedLine' });

/**
 * Every line of the document marked as added, like the merge view marks changed lines.
 *
 * Why not the merge view for an empty original: CodeMirror's documents always
 * have at least one line, so "" counts as one empty line that the insertion
 * replaces, and the unified view shows it as a removed (red) line above the
 * new cell's text. Nothing was removed, so nothing red is shown.
 */
const allLinesAdded: Extension = EditorView.decorations.compute(
  ['doc'],
  state => {
    const builder = new RangeSetBuilder<Decoration>();
    for (let number = 1; number <= state.doc.lines; number++) {
      const line = state.doc.line(number);
      builder.add(line.from, line.from, addedLine);
    }
    return builder.finish();
  }
);

/**
 * A read-only CodeMirror merge view of a cell's source: the proposed text with
 * deletions and insertions marked inline (a new cell: every line added), highlighted like the cell itself
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
    // A new cell (or an empty cell being filled) has no old text: only added lines.
    const comparison =
      original === ''
        ? allLinesAdded
        : unifiedMergeView({
            original,
            mergeControls: false,
            gutter: true,
            syntaxHighlightDeletions: true,
            collapseUnchanged: { margin: 3, minSize: 6 }
          });
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
          comparison,
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

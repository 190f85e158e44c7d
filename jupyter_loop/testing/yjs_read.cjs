// Reads Y updates as a browser tab does: with Yjs, the library JupyterLab holds the notebook in.
//
// stdin: JSON {"docs": {"name": ["base64 update", ...]}, "texts": ["root", ...]}; each
// doc's updates are applied in order to a fresh Y.Doc. stdout: JSON {"name": {"pending":
// [[client, clock], ...], "pending_deletes": bool, "cells": [...], "meta": {...}, "state":
// {...}, "texts": {"root": "..."}}}, the notebook's roots read with the types jupyter_ydoc
// gives them, and the named roots as Y.Text. pycrdt (yrs) is another implementation: what it
// shows is not proof of what a tab shows. Optional "positions": {"name": [relative position
// JSON, ...]}: each resolved as a cell editor resolves a collaborator's caret, to [index of
// the cell whose source it is in, index in that source] (null: in no cell's source).
'use strict';
const path = require('path');
const Y = require(require.resolve('yjs', {
  paths: [process.env.LOOP_NODE_MODULES || path.join(__dirname, '..', '..', 'node_modules')]
}));

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', chunk => (input += chunk));
process.stdin.on('end', () => {
  const { docs, texts = [], positions = {} } = JSON.parse(input);
  const result = {};
  for (const [name, updates] of Object.entries(docs)) {
    const doc = new Y.Doc();
    for (const update of updates) {
      Y.applyUpdate(doc, new Uint8Array(Buffer.from(update, 'base64')));
    }
    const pending = doc.store.pendingStructs;
    result[name] = {
      pending: pending ? [...pending.missing.entries()] : [],
      pending_deletes: doc.store.pendingDs !== null,
      cells: doc.getArray('cells').toJSON(),
      meta: doc.getMap('meta').toJSON(),
      state: doc.getMap('state').toJSON(),
      texts: Object.fromEntries(texts.map(root => [root, doc.getText(root).toString()])),
      positions: (positions[name] || []).map(json => resolved(doc, json))
    };
  }
  process.stdout.write(JSON.stringify(result));
});

function resolved(doc, json) {
  const position = Y.createAbsolutePositionFromRelativePosition(
    Y.createRelativePositionFromJSON(json),
    doc
  );
  if (position === null) {
    return null;
  }
  const cells = doc.getArray('cells').toArray();
  const cell = cells.findIndex(ycell => ycell.get('source') === position.type);
  return cell < 0 ? null : [cell, position.index];
}

"""Holes in Y updates, read from updates Yjs itself wrote with every kind of content."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest
from pycrdt import Doc

from jupyter_loop.document.update_holes import UnreadableUpdate, check_whole, holes
from jupyter_loop.testing.yjs import read_with_yjs

NODE_MODULES = Path(__file__).parents[2] / "node_modules"
EVERY_CONTENT = """
const Y = require(process.argv[1] + '/yjs');
const doc = new Y.Doc();
doc.clientID = 1234567;
const text = doc.getText('text');
text.insert(0, 'héllo 🌍 wörld');                   // strings, counted in UTF-16 units
text.format(0, 5, { bold: true });                   // formats
text.insertEmbed(3, { image: 'x.png' });             // an embed
text.delete(1, 2);                                   // deleted content
const map = doc.getMap('map');
map.set('any', { n: -1234567, f: 1.5, big: 2n ** 40n, t: true, none: null, s: 'é',
                 list: [1, 'two', [3]], bytes: new Uint8Array([1, 2]) });
map.set('binary', new Uint8Array([9, 8, 7]));
map.set('nested', new Y.Map());
map.get('nested').set('deep', new Y.Text('deep text'));
map.set('sub', new Y.Doc());                         // a subdocument
map.set('any', 'replaced');                          // a replaced value
const xml = doc.getXmlFragment('xml');
const element = new Y.XmlElement('p');
xml.insert(0, [element, new Y.XmlText('plain')]);
element.setAttribute('class', 'c');
const states = [Y.encodeStateAsUpdate(doc)];
const vector = Y.encodeStateVector(doc);
doc.getArray('cells').insert(0, ['later']);
const later = Y.encodeStateAsUpdate(doc, vector);     // only what came after
process.stdout.write(JSON.stringify({
  full: Buffer.from(Y.encodeStateAsUpdate(doc)).toString('base64'),
  first: Buffer.from(states[0]).toString('base64'),
  later: Buffer.from(later).toString('base64'),
}));
"""


@pytest.fixture(scope="module")
def written_by_yjs() -> dict[str, bytes]:
    node = shutil.which("node")
    assert node is not None, "node is needed to write updates with Yjs"
    done = subprocess.run(
        [node, "-e", EVERY_CONTENT, str(NODE_MODULES)], capture_output=True, text=True, check=True
    )
    return {name: base64.b64decode(b64) for name, b64 in json.loads(done.stdout).items()}


def test_a_whole_document_of_every_kind_of_content_has_no_hole(written_by_yjs):
    assert holes(written_by_yjs["full"]) == []
    assert holes(written_by_yjs["first"]) == []


def test_an_update_that_builds_on_clocks_it_lacks_has_that_hole(written_by_yjs):
    (hole,) = holes(written_by_yjs["later"])
    assert hole.client == 1234567 and hole.clock == 0 and hole.length > 0


@pytest.mark.skipif(
    int(version("pycrdt").split(".")[1]) < 14,
    reason="pycrdt 0.13 holds the later update back as Yjs does: nothing lenient to encode",
)
def test_a_lenient_document_encodes_the_hole_yjs_waits_for(written_by_yjs):
    """pycrdt applies the later update alone and shows it; Yjs waits for the same hole."""
    lenient = Doc()
    lenient.apply_update(written_by_yjs["later"])
    reencoded = lenient.get_update()
    (view,) = read_with_yjs({"reencoded": [reencoded]}).values()
    found = holes(reencoded)
    assert found
    assert {client for client, _ in view.pending} == {hole.client for hole in found}


def test_bytes_that_end_mid_struct_are_unreadable(written_by_yjs):
    with pytest.raises(UnreadableUpdate):
        holes(written_by_yjs["full"][:40])


def test_every_update_yjs_writes_reads_whole(written_by_yjs):
    """Deletions, every kind of content, an update of only what came later: each reads to
    its last byte (a stored row that does not is cut short, and dropped)."""
    for update in written_by_yjs.values():
        check_whole(update)


@pytest.mark.parametrize("kept", [0.1, 0.3, 0.5, 0.7, 0.9])
def test_an_update_cut_short_and_filled_with_zeros_is_unreadable(written_by_yjs, kept):
    """What SQLite reads of a row in a file truncated inside a page."""
    full = written_by_yjs["full"]
    cut = int(len(full) * kept)
    with pytest.raises(UnreadableUpdate):
        check_whole(full[:cut] + bytes(len(full) - cut))

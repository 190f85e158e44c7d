"""Where a Y update has holes: ranges of a client's structs it lacks but builds on.

Yjs (the browser) integrates a client's structs only in clock order: a struct whose
earlier clocks it has never seen waits as *pending*, and so does everything that hangs on
it. pycrdt (yrs) is more lenient and shows such items, so a document the server reads
whole can reach a tab with a count, an output or a run mark that never appears. The
full state of a whole document (``doc.get_update()``) has no holes: every client's
structs start at clock 0 and run without a skip. This module reads the struct part of an
update (format v1, as ``yjs``'s ``readClientsStructRefs`` defines it) and says where a
client's range starts late or skips.

We read the binary ourselves because neither library exposes it: pycrdt has no decoder
for updates, and asking Yjs (node) is not something a server may depend on.

Example:
    >>> from pycrdt import Array, Doc, Map
    >>> doc = Doc()
    >>> doc.get("state", type=Map)["path"] = "nb.ipynb"  # clock 0
    >>> before = doc.get_state()
    >>> doc.get("cells", type=Array).append(Map({"id": "c1"}))
    >>> holes(doc.get_update())
    []
    >>> (hole,) = holes(doc.get_update(before))  # the cell alone, without clock 0
    >>> hole.client == doc.client_id, hole.clock, hole.length
    (True, 0, 1)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from pycrdt import Doc, get_state, merge_updates, write_var_uint

GC, DELETED, JSON, BINARY, STRING, EMBED, FORMAT, TYPE, ANY, DOC, SKIP = range(11)
HAS_ORIGIN, HAS_RIGHT_ORIGIN, HAS_PARENT_SUB, CONTENT = 0x80, 0x40, 0x20, 0x1F
XML_ELEMENT, XML_HOOK = 3, 5
"""Type refs that carry a name (``YXmlElement``, ``YXmlHook``)."""


@dataclass(frozen=True)
class Hole:
    """Clocks ``[clock, clock + length)`` of ``client`` that the update lacks."""

    client: int
    clock: int
    length: int


class UnreadableUpdate(ValueError):
    """The bytes are not a Y update of format v1."""


def holes(update: bytes) -> list[Hole]:
    """The ranges a document that applies ``update`` alone would wait for, as Yjs does:
    clocks a client's structs skip or start after, and structs an item builds on (its
    neighbours when it was inserted, its parent) that the update does not hold.

    Meant for a document's full state: there a client's first clock above 0 is a hole.

    >>> holes(bytes(2))  # an empty update: no structs, no deletions
    []
    """
    structs = _Structs(update)
    found = set(structs.skipped)
    for client, ranges in structs.held.items():
        first = min((start for start, _ in ranges), default=0)
        if first > 0:
            found.add(Hole(client, 0, first))
    for client, clock in structs.needed:
        if not any(start <= clock < end for start, end in structs.held.get(client, ())):
            found.add(Hole(client, clock, 1))
    return sorted(found, key=lambda hole: (hole.client, hole.clock))


def check_whole(update: bytes) -> None:
    """Raise :class:`UnreadableUpdate` unless ``update`` reads as one Y update from its
    first byte to its last, with no struct of length zero.

    A stored row cut short and filled with zeros (SQLite reads the missing part of a file
    truncated inside a page as zeros, and its checks pass) still starts like an update:
    pycrdt stops reading at the zeros and applies what came before them without a word,
    or panics. Neither Yjs nor yrs writes a struct of no length, nor bytes after the
    delete set, and zeros read as both.

    >>> from pycrdt import Map
    >>> doc = Doc()
    >>> doc.get("state", type=Map)["path"] = "nb.ipynb"
    >>> check_whole(doc.get_update())
    >>> update = doc.get_update()
    >>> check_whole(update[: len(update) // 2] + bytes(len(update) - len(update) // 2))
    Traceback (most recent call last):
    ...
    jupyter_loop.document.update_holes.UnreadableUpdate: a struct of no length
    """
    structs = _Structs(update)
    if structs.zero_lengths:
        raise UnreadableUpdate("a struct of no length")
    structs.read_delete_set()
    if structs.left:
        raise UnreadableUpdate(f"{structs.left} byte(s) after the update's end")


def struct_ends(update: bytes) -> dict[int, int]:
    """Each client's clock just past the last struct ``update`` holds of it: what a state
    vector would say after it, if nothing were missing before. (pycrdt's ``get_state``
    of an update that starts past a client's clock 0 says nothing of that client: its
    structs wait.)

    >>> from pycrdt import Text
    >>> doc = Doc()
    >>> doc.get("t", type=Text).insert(0, "ab")
    >>> before = doc.get_state()
    >>> doc.get("t", type=Text).insert(2, "c")
    >>> struct_ends(doc.get_update(before)) == {doc.client_id: 3}
    True
    """
    structs = _Structs(update)
    return {
        client: max(end for _, end in ranges) for client, ranges in structs.held.items() if ranges
    }


def state_after(state: dict[int, int], update: bytes) -> dict[int, int]:
    """What a holder of every struct up to ``state`` (a state vector) holds once it has
    ``update`` too: each client's clock advanced over the structs that follow on from
    it without a gap.

    pycrdt's ``get_state`` of an update alone counts only the clients whose structs it
    holds from clock 0, so an update that follows others (every update a room writes
    after its first) says nothing. ``state`` is stood in for by garbage-collected
    structs (a GC struct is a client's clock range and nothing more) merged before
    ``update``: pycrdt reads that merge's state vector in Rust, about twenty times
    faster than reading the update's structs here (3 ms for 2,000 printed lines).

    >>> from pycrdt import Text
    >>> doc = Doc()
    >>> doc.get("t", type=Text).insert(0, "ab")
    >>> before = doc.get_state()
    >>> doc.get("t", type=Text).insert(2, "cd")
    >>> after = doc.get_update(before)
    >>> state_vector(get_state(after))  # pycrdt: nothing of the client
    {}
    >>> state_after({doc.client_id: 2}, after) == {doc.client_id: 4}
    True
    >>> state_after({doc.client_id: 1}, after) == {doc.client_id: 1}  # clock 1 missing
    True
    """
    held = write_var_uint(len(state)) + b"".join(
        write_var_uint(1)
        + write_var_uint(client)
        + write_var_uint(0)  # one struct at 0,
        + bytes([GC])
        + write_var_uint(clock)  # garbage collected, ``clock`` long
        for client, clock in state.items()
    )
    if not state:
        return state_vector(get_state(update))
    return state_vector(get_state(merge_updates(held + write_var_uint(0), update)))


class _Structs:
    """The struct part of an update, read: the clock ranges held per client, the ranges
    skipped, and the ids items build on."""

    def __init__(self, update: bytes) -> None:
        reader = _Reader(update)
        self.held: dict[int, list[tuple[int, int]]] = {}
        self.skipped: list[Hole] = []
        self.needed: list[tuple[int, int]] = []
        self.zero_lengths = 0
        self._reader = reader
        try:
            for _ in range(reader.var_uint()):
                count, client, clock = reader.var_uint(), reader.var_uint(), reader.var_uint()
                ranges = self.held.setdefault(client, [])
                for _ in range(count):
                    info = reader.byte()
                    if info & CONTENT == SKIP:
                        length = reader.var_uint()
                        self.skipped.append(Hole(client, clock, length))
                    else:
                        if info & CONTENT == GC:
                            length = reader.var_uint()
                        else:
                            length = _read_item(reader, info, self.needed)
                        ranges.append((clock, clock + length))
                    self.zero_lengths += length == 0
                    clock += length
        except IndexError as e:
            raise UnreadableUpdate("the update ends in the middle of a struct") from e

    def read_delete_set(self) -> None:
        """Read on past the structs: the ranges the update deletes, client by client."""
        reader = self._reader
        try:
            for _ in range(reader.var_uint()):
                reader.var_uint()  # the client
                for _ in range(reader.var_uint()):
                    reader.var_uint(), reader.var_uint()  # a clock, a length
        except IndexError as e:
            raise UnreadableUpdate("the update ends in the middle of its deletions") from e

    @property
    def left(self) -> int:
        return self._reader.left


def _read_item(reader: _Reader, info: int, needed: list[tuple[int, int]]) -> int:
    """Read an item, noting the ids it builds on; return its length in clocks."""
    if info & HAS_ORIGIN:
        client, clock = reader.var_uint(), reader.var_uint()
        needed.append((client, clock))
    if info & HAS_RIGHT_ORIGIN:
        needed.append((reader.var_uint(), reader.var_uint()))
    if not info & (HAS_ORIGIN | HAS_RIGHT_ORIGIN):  # the parent is written out
        if reader.var_uint() == 1:
            reader.string()  # a root type's name
        else:
            needed.append((reader.var_uint(), reader.var_uint()))  # the parent item
        if info & HAS_PARENT_SUB:
            reader.string()
    return _content_length(reader, info & CONTENT)


def _content_length(reader: _Reader, kind: int) -> int:
    """Read an item's content; return its length in clocks."""
    if kind == DELETED:
        return reader.var_uint()
    if kind == JSON:
        count = reader.var_uint()
        for _ in range(count):
            reader.string()
        return count
    if kind == BINARY:
        reader.take(reader.var_uint())
        return 1
    if kind == STRING:
        return len(reader.string().encode("utf-16-le")) // 2  # Yjs counts UTF-16 units
    if kind == EMBED:
        reader.string()
        return 1
    if kind == FORMAT:
        reader.string(), reader.string()
        return 1
    if kind == TYPE:
        if reader.var_uint() in (XML_ELEMENT, XML_HOOK):
            reader.string()
        return 1
    if kind == ANY:
        count = reader.var_uint()
        for _ in range(count):
            reader.any()
        return count
    if kind == DOC:
        reader.string(), reader.any()
        return 1
    raise UnreadableUpdate(f"unknown content kind {kind}")


class _Reader:
    """lib0's decoding of the numbers, strings and values a Y update is made of."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._at = 0

    @property
    def left(self) -> int:
        return len(self._data) - self._at

    def byte(self) -> int:
        value = self._data[self._at]
        self._at += 1
        return value

    def take(self, count: int) -> bytes:
        if self._at + count > len(self._data):
            raise IndexError("past the end")
        chunk = self._data[self._at : self._at + count]
        self._at += count
        return chunk

    def var_uint(self) -> int:
        value, shift = 0, 0
        while True:
            byte = self.byte()
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7

    def var_int(self) -> int:
        byte = self.byte()
        value, negative, multiplier = byte & 0x3F, byte & 0x40, 64
        while byte & 0x80:
            byte = self.byte()
            value += (byte & 0x7F) * multiplier
            multiplier *= 128
        return -value if negative else value

    def string(self) -> str:
        return self.take(self.var_uint()).decode("utf-8")

    def any(self) -> Any:
        tag = self.byte()
        if tag in (127, 126):  # undefined, null
            return None
        if tag == 125:
            return self.var_int()
        if tag == 124:
            return struct.unpack(">f", self.take(4))[0]
        if tag in (123, 122):  # float64, bigint64
            return self.take(8)
        if tag in (121, 120):
            return tag == 120
        if tag == 119:
            return self.string()
        if tag == 118:
            return {self.string(): self.any() for _ in range(self.var_uint())}
        if tag == 117:
            return [self.any() for _ in range(self.var_uint())]
        if tag == 116:
            return self.take(self.var_uint())
        raise UnreadableUpdate(f"unknown value tag {tag}")


def own_structs(doc: Doc) -> bytes:
    """Every struct ``doc``'s own client wrote (and the delete set): what fills its holes.

    >>> from pycrdt import Map
    >>> doc = Doc()
    >>> doc.get("state", type=Map)["path"] = "nb.ipynb"
    >>> other = Doc()
    >>> other.apply_update(doc.get_update())
    >>> other.get("state", type=Map)["path"] = "renamed.ipynb"  # builds on doc's path
    >>> [hole.client == doc.client_id for hole in holes(own_structs(other))]
    [True]
    >>> from pycrdt import merge_updates
    >>> holes(merge_updates(own_structs(other), own_structs(doc)))
    []
    """
    others = [
        (client, clock)
        for client, clock in state_vector(doc.get_state()).items()
        if client != doc.client_id
    ]
    vector = write_var_uint(len(others)) + b"".join(
        write_var_uint(client) + write_var_uint(clock) for client, clock in others
    )
    return doc.get_update(vector)


def state_vector(encoded: bytes) -> dict[int, int]:
    """A state vector as Y encodes it (``Doc.get_state()``, a sync step 1's payload): each
    client's next clock, that is how many of its structs the holder has.

    >>> from pycrdt import Map
    >>> doc = Doc()
    >>> doc.get("state", type=Map)["path"] = "nb.ipynb"
    >>> state_vector(doc.get_state()) == {doc.client_id: 1}
    True
    >>> state_vector(Doc().get_state())
    {}
    """
    reader = _Reader(encoded)
    try:
        return {reader.var_uint(): reader.var_uint() for _ in range(reader.var_uint())}
    except IndexError as e:
        raise UnreadableUpdate("a state vector cut short") from e

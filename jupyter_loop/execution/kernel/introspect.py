"""The kernel's user variables, read by a fixed snippet that runs silently (pure parts here).

The snippet (:data:`SNIPPET`) is the only code this module ever sends; nothing from a model
or a request reaches it. It is evaluated as a ``user_expressions`` entry of a silent
execute request (``silent=True``, ``store_history=False``): no history, no execution count,
nothing on the notebook. It runs in a fresh namespace, so it leaves no names behind.

It never runs user code: no ``repr``/``str``/``len``/attribute lookups that a user class
could override. It reads ``type(value)`` only; the class's MRO, name and module through
``type``'s own descriptors (``t.__mro__`` would go through a metaclass's
``__getattribute__``); types are compared with ``is``, never ``==``, ``in`` or a dict
lookup (which call a metaclass's ``__eq__`` and ``__hash__``). For known types it reads
numpy's C-level descriptors (``numpy.ndarray.shape``) and pandas' block manager, taken from
the instance dict through the base class's own slot: pandas' properties (``shape``,
``dtypes``) look up ``self.columns`` and ``self._constructor_sliced``, which a subclass may
override, and go through its ``__getattribute__``. ``len`` goes through the builtin type's
own slot; ``repr`` only of exact builtin scalars and of (cut) exact ``str``/``bytes``. numpy
and pandas are looked up in ``sys.modules``, never imported.

Example:
    >>> text = repr(json.dumps({"total": 1, "variables": [
    ...     {"name": "df", "type": "pandas.DataFrame", "shape": [3, 2],
    ...      "columns": [["a", "int64"], ["b", "object"]]}]}))
    >>> report = parse_report(text)
    >>> print(describe(report))
    df: pandas.DataFrame 3×2, columns a int64, b object
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...errors import Unavailable

Mask = Callable[[str], str]
"""Masks secrets in a text (the server's masker); the identity when masking is off."""


def _unmasked(text: str) -> str:
    return text


MAX_VARIABLES = 200
"""Variables the snippet describes at most (the rest are only counted)."""
MAX_COLUMNS = 50
REPR_CHARS = 80
"""Characters of a string's or bytes' repr shown."""
TEXT_CHARS = 1000
"""Characters of a string the kernel sends: masked here as a whole, then cut to
:data:`REPR_CHARS`, so that a secret is not cut into a piece the masker cannot recognise."""

SNIPPET = r"""
import sys
g = user_ns
hidden = set()
shell = sys.modules.get("IPython.core.getipython")
if shell is not None:
    ip = shell.get_ipython()
    hidden = set(ip.user_ns_hidden) if ip is not None else hidden
np = sys.modules.get("numpy")
pd = sys.modules.get("pandas")
mro_of = type.__dict__["__mro__"].__get__
dict_of = type.__dict__["__dict__"].__get__
qualname = type.__dict__["__qualname__"].__get__
module_of = type.__dict__["__module__"].__get__
def among(t, types):
    for candidate in types:
        if t is candidate:
            return True
    return False
def inherits(t, base):
    return base is not None and among(base, mro_of(t))
skip = (type(sys), type(lambda: 0), type(len), type, type(print))
base_len = ((list, list.__len__), (tuple, tuple.__len__), (dict, dict.__len__),
            (set, set.__len__), (frozenset, frozenset.__len__), (str, str.__len__),
            (bytes, bytes.__len__), (bytearray, bytearray.__len__), (range, range.__len__))
def module_name(t):
    module = module_of(t)
    return module if type(module) is str else "?"
def type_name(t):
    module = module_name(t)
    name = qualname(t)
    return name if module == "builtins" else module.split(".")[0] + "." + name
def label(value):
    t = type(value)
    if among(t, (str, int, float, bool)) or value is None:
        text = repr(value) if t is not str else value
        return text[:40]
    if np is not None and inherits(t, np.generic) and module_name(t) == "numpy":
        return str(value)[:40]
    return "<" + type_name(t) + ">"
def dtype_name(dtype):
    t = type(dtype)
    module = module_name(t)
    if np is not None and inherits(t, np.dtype) and module.startswith("numpy"):
        return str(dtype)
    if pd is not None and module.startswith("pandas"):
        return str(dtype)
    return "<" + type_name(t) + ">"
def pandas_data(value, base):
    for klass in mro_of(base):
        slot = dict_of(klass).get("__dict__")
        if slot is not None:
            return slot.__get__(value, klass).get("_mgr")
    return None
def describe(name, value):
    t = type(value)
    entry = {"name": name, "type": type_name(t)}
    if among(t, (int, float, complex, bool)) or value is None:
        if t is int and value.bit_length() > 256:
            entry["repr"] = "<int of %d bits>" % value.bit_length()
        else:
            entry["repr"] = repr(value)
    elif t is str:
        entry["length"] = len(value)
        entry["text"] = value[:TEXT_CHARS]
    elif t is bytes:
        entry["length"] = len(value)
        entry["repr"] = repr(value[:TEXT_CHARS])
    if pd is not None and inherits(t, pd.DataFrame):
        data = pandas_data(value, pd.DataFrame)
        cols, rows = data.shape
        entry["shape"] = [rows, cols]
        labels, dtypes = data.axes[0], data.get_dtypes()
        entry["columns"] = [[label(labels[i]), dtype_name(dtypes[i])]
                            for i in range(min(cols, MAX_COLUMNS))]
    elif pd is not None and inherits(t, pd.Series):
        data = pandas_data(value, pd.Series)
        entry["shape"] = list(data.shape)
        entry["dtype"] = dtype_name(data.dtype)
    elif np is not None and inherits(t, np.ndarray):
        entry["shape"] = list(np.ndarray.shape.__get__(value, np.ndarray))
        entry["dtype"] = dtype_name(np.ndarray.dtype.__get__(value, np.ndarray))
    elif "length" not in entry:
        for base in mro_of(t):
            for known, length in base_len:
                if base is known:
                    entry["length"] = length(value)
                    break
            if "length" in entry:
                break
    return entry
names = [n for n in g if type(n) is str and not n.startswith("_") and n not in hidden]
names = [n for n in names if not any(inherits(type(g[n]), kind) for kind in skip)]
result = {"total": len(names), "variables": []}
for n in sorted(names)[:MAX_VARIABLES]:
    try:
        result["variables"].append(describe(n, g[n]))
    except Exception as e:
        result["variables"].append({"name": n, "type": type_name(type(g[n])),
                                    "error": type_name(type(e))})
import json
out = json.dumps(result, ensure_ascii=False)
"""
"""Runs in a fresh namespace holding ``user_ns`` and the limits; leaves its JSON in ``out``."""

EXPRESSION = (
    "(lambda d: (exec(d.pop('code'), d), d['out'])[1])"
    f"({{'code': {SNIPPET!r}, 'user_ns': globals(), 'MAX_VARIABLES': {MAX_VARIABLES}, "
    f"'MAX_COLUMNS': {MAX_COLUMNS}, 'TEXT_CHARS': {TEXT_CHARS}}})"
)
"""The ``user_expressions`` entry: runs :data:`SNIPPET` and evaluates to its JSON text."""


EXPRESSION_KEY = "jupyter_loop_variables"


class IntrospectionFailed(Unavailable):
    """The kernel's answer could not be read as a variables report."""


def report_from_reply(content: dict[str, Any], mask: Mask = _unmasked) -> VariablesReport:
    """The report inside an ``execute_reply``'s content, or :class:`IntrospectionFailed`.

    Example:
        >>> report_from_reply({"status": "ok", "user_expressions": {EXPRESSION_KEY: {
        ...     "status": "error", "ename": "NameError", "evalue": "x"}}})
        Traceback (most recent call last):
        ...
        jupyter_loop.execution.kernel.introspect.IntrospectionFailed: The variables could not be \
read: NameError: x
    """
    entry = (content.get("user_expressions") or {}).get(EXPRESSION_KEY)
    if not isinstance(entry, dict):
        raise IntrospectionFailed(
            f"The variables could not be read: the kernel answered {content.get('status')!r}."
        )
    if entry.get("status") != "ok":
        problem = f"{entry.get('ename', 'error')}: {entry.get('evalue', '')}"
        raise IntrospectionFailed(f"The variables could not be read: {problem}")
    return parse_report(str((entry.get("data") or {}).get("text/plain", "")), mask)


@dataclass(frozen=True)
class Variable:
    """One user variable, described without running its code.

    Attributes:
        name: The variable's name.
        type: ``int``, ``pandas.DataFrame``, ``numpy.ndarray``, ``mymodule.Thing`` …
        shape: For arrays, series and dataframes.
        length: For builtin containers, ``str`` and ``bytes``.
        dtype: For arrays and series.
        columns: A dataframe's (first) columns as (label, dtype).
        repr: For builtin scalars and cut ``str``/``bytes`` only.
        error: Set when describing it failed (the type of the exception).
    """

    name: str
    type: str
    shape: tuple[int, ...] | None = None
    length: int | None = None
    dtype: str | None = None
    columns: tuple[tuple[str, str], ...] = ()
    repr: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class VariablesReport:
    """The variables the snippet described, and how many there were in all."""

    variables: tuple[Variable, ...]
    total: int


def parse_report(text_plain: str, mask: Mask = _unmasked) -> VariablesReport:
    """Read the ``text/plain`` of the expression (a Python ``str`` literal holding JSON).

    ``mask`` is applied to every text that came from the user's objects (names, column
    labels, string values) before string values are cut to :data:`REPR_CHARS`.

    Example:
        >>> parse_report(repr('{"total": 2, "variables": [{"name": "n", "type": "int", '
        ...                   '"repr": "3"}]}'))
        VariablesReport(variables=(Variable(name='n', type='int', shape=None, length=None, \
dtype=None, columns=(), repr='3', error=None),), total=2)
    """
    try:
        literal = ast.literal_eval(text_plain)
        data = json.loads(literal) if isinstance(literal, str) else None
    except (ValueError, SyntaxError, json.JSONDecodeError) as e:
        raise IntrospectionFailed(f"The variables could not be read: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("variables"), list):
        raise IntrospectionFailed("The variables could not be read: no report in the answer.")
    variables = tuple(
        _variable(entry, mask) for entry in data["variables"] if isinstance(entry, dict)
    )
    total = data.get("total")
    return VariablesReport(variables, total if isinstance(total, int) else len(variables))


def _variable(entry: dict[str, Any], mask: Mask) -> Variable:
    shape = entry.get("shape")
    columns = entry.get("columns") or []
    return Variable(
        name=mask(str(entry.get("name", "?"))),
        type=str(entry.get("type", "?")),
        shape=tuple(int(n) for n in shape) if isinstance(shape, list) else None,
        length=_int_or_none(entry.get("length")),
        dtype=_str_or_none(entry.get("dtype")),
        columns=tuple((mask(str(c[0])), str(c[1])) for c in columns if isinstance(c, list | tuple)),
        repr=_shown_value(entry, mask),
        error=_str_or_none(entry.get("error")),
    )


def describe_variable(variable: Variable, max_columns: int = 20) -> str:
    """One line: ``name: type shape dtype, columns …`` or ``name: int = 3``.

    Example:
        >>> describe_variable(Variable("a", "numpy.ndarray", shape=(10, 3), dtype="float64"))
        'a: numpy.ndarray 10×3 float64'
        >>> describe_variable(Variable("s", "str", length=5, repr="'hello'"))
        "s: str len 5 = 'hello'"
    """
    parts = [f"{variable.name}: {variable.type}"]
    if variable.shape is not None:
        parts.append("×".join(str(n) for n in variable.shape) or "scalar")
    if variable.dtype:
        parts.append(variable.dtype)
    if variable.length is not None:
        parts.append(f"len {variable.length}")
    line = " ".join(parts)
    if variable.columns:
        shown = ", ".join(f"{name} {dtype}" for name, dtype in variable.columns[:max_columns])
        more = len(variable.columns) > max_columns or (
            variable.shape is not None
            and len(variable.shape) == 2
            and variable.shape[1] > len(variable.columns[:max_columns])
        )
        line += f", columns {shown}" + (", …" if more else "")
    if variable.repr is not None:
        line += f" = {variable.repr}"
    if variable.error:
        line += f" (not described: {variable.error})"
    return line


def describe(report: VariablesReport, budget_chars: int = 4000) -> str:
    """The report as lines within ``budget_chars`` (a last line says what did not fit).

    Example:
        >>> many = tuple(Variable(f"v{i}", "int", repr=str(i)) for i in range(9))
        >>> print(describe(VariablesReport(many, 9), 60))
        v0: int = 0
        v1: int = 1
        v2: int = 2
        (6 more variables)
    """
    if not report.variables:
        return "(no user variables)"
    lines: list[str] = []
    used = 0
    for variable in report.variables:
        line = describe_variable(variable)
        if used + len(line) + 1 > budget_chars - 24 and lines:
            break
        lines.append(line)
        used += len(line) + 1
    hidden = report.total - len(lines)
    if hidden > 0:
        lines.append(f"({hidden} more variables)")
    return "\n".join(lines)


def _shown_value(entry: dict[str, Any], mask: Mask) -> str | None:
    """A scalar's repr, or a string's start (masked whole, then cut), quoted.

    Example:
        >>> _shown_value({"text": "key=hunter2 " + "x" * 100, "length": 112},
        ...              lambda t: t.replace("hunter2", "••••••"))[:24]
        "'key=•••••• xxxxxxxxxxxx"
    """
    text, length = entry.get("text"), _int_or_none(entry.get("length"))
    if isinstance(text, str):
        masked = mask(text)
        more = len(masked) > REPR_CHARS or (length is not None and length > len(text))
        return repr(masked[:REPR_CHARS]) + ("…" if more else "")
    shown = _str_or_none(entry.get("repr"))
    if shown is None:
        return None
    masked = mask(shown)
    return masked if len(masked) <= REPR_CHARS else masked[:REPR_CHARS] + "…"


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None

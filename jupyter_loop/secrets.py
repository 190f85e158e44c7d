"""Secret masking for outputs, prompts, logs and the journal (pure, no I/O).

Three sources of secrets are masked:

* values given in configuration;
* values of environment variables whose *names* look sensitive (see
  :data:`DEFAULT_ENV_NAME_PATTERNS`, matched case-insensitively with :mod:`fnmatch`);
* well-known token shapes (:data:`TOKEN_PATTERN`): OpenAI / Anthropic ``sk-…``, GitHub
  ``ghp_…`` / ``github_pat_…``, AWS ``AKIA…`` / ``ASIA…``, Slack ``xox?-…``, Google ``AIza…``,
  Hugging Face ``hf_…``, JWTs ``eyJ….….…`` and ``Bearer <token>`` (the scheme stays visible).

Values shorter than ``min_length`` are ignored: masking ``"1"`` everywhere would destroy output.
Everything is found with one compiled alternation (configured values longest first), and
overlapping matches are merged, so a secret that overlaps another is masked in full.

Example:
    >>> masker = SecretMasker(["hunter2-hunter2"], environ={"OPENAI_API_KEY": "abc123xyz"})
    >>> masker.mask("pw=hunter2-hunter2 key=abc123xyz")
    'pw=•••••• key=••••••'
    >>> masker.mask("Authorization: Bearer 0123456789abcdefXYZ")
    'Authorization: Bearer ••••••'
    >>> stream = masker.stream()
    >>> stream.feed("pw=hunter2-hun") + stream.feed("ter2\\n") + stream.flush()
    'pw=••••••\\n'
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from .mime_masking import mask_entry

DEFAULT_ENV_NAME_PATTERNS: tuple[str, ...] = (
    "*API_KEY",
    "*APIKEY",
    "*_KEY",
    "*TOKEN",
    "*SECRET",
    "*SECRET_*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_PAT",
    "*CREDENTIALS",
)
"""Environment variable names whose values are secrets (``fnmatch``, case-insensitive).

``*_KEY`` errs on the side of masking: a variable named ``GPG_KEY`` holding a key id is
masked too. Add names with ``env_name_patterns``; pass ``()`` to mask configured values only.
"""

DEFAULT_MASK = "••••••"

MAX_TOKEN_CHARS = 4096
"""No token shape matches more characters than this (a stream holds back at most this many)."""

# Each family starts with a literal, so the regex engine skips most positions at C speed; the
# "not preceded by a token character" check is a lookbehind placed *after* that literal.
_B = "[A-Za-z0-9_-]"
TOKEN_PATTERN = rf"""
  s(?:k-(?<!{_B}...)(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{{20,256}}(?![A-Za-z0-9_-]))
| g(?:h[pousr]_(?<!{_B}....)[A-Za-z0-9]{{36,255}}(?![A-Za-z0-9_])
   |ithub_pat_(?<!{_B}.{{11}})[A-Za-z0-9_]{{22,255}}(?![A-Za-z0-9_]))
| A(?:[KS]IA(?<!{_B}....)[0-9A-Z]{{16}}(?![0-9A-Za-z])
   |Iza(?<!{_B}....)[0-9A-Za-z_-]{{35}}(?![0-9A-Za-z_-]))
| x(?:ox[abprs]-(?<!{_B}.....)[A-Za-z0-9-]{{10,255}}(?![A-Za-z0-9-]))
| h(?:f_(?<!{_B}...)[A-Za-z0-9]{{30,255}}(?![A-Za-z0-9]))
| e(?:yJ(?<!{_B}...)[A-Za-z0-9_-]{{5,1500}}\.[A-Za-z0-9_-]{{5,2000}}\.[A-Za-z0-9_-]{{5,500}}
   (?![A-Za-z0-9_-]))
| (?:[Bb]earer|BEARER)(?<![A-Za-z0-9_]......)[ \t]{{1,32}}
  (?P<bearer>(?=[A-Za-z._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{{16,2048}})(?![A-Za-z0-9._~+/=-])
"""
"""Well-known token shapes (a verbose regex); group ``bearer`` is the secret part of a header."""

# Literal starts of the token shapes: a stream holds back a tail that could begin one of them.
_TOKEN_PREFIXES = (
    *("sk-", "github_pat_", "AKIA", "ASIA", "AIza", "hf_", "eyJ", "Bearer", "bearer", "BEARER"),
    *(f"gh{c}_" for c in "pousr"),
    *(f"xox{c}-" for c in "abprs"),
)
_TOKEN_START = re.compile(  # where a token shape could begin: a first letter after a boundary
    "(?<![A-Za-z0-9_])[" + "".join(sorted({prefix[0] for prefix in _TOKEN_PREFIXES})) + "]"
)
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_.\-]*")
_BEARER_TAIL = re.compile(r"(?:[Bb]earer|BEARER)[ \t]{1,32}\Z")
_BEARER_CHARS = re.compile(r"[A-Za-z0-9._~+/=\-]*")
_CONTEXT_CHARS = 16  # longest lookbehind reach (github_pat_ + 1), with room to spare

Span = tuple[int, int, int]  # (match start, secret start, end)


@dataclass(frozen=True)
class MaskedText:
    """A text with its secrets masked, and where each mask stands in for a secret.

    Text is masked whole before anything cuts it (a page, an excerpt, a window around a
    cursor): a cut through the raw text would leave pieces of a secret that the masker no
    longer recognises. A position in the raw text (a cursor) is carried over with
    :meth:`position`.

    Attributes:
        text: The masked text.
        masks: ``(raw start, raw end, masked start)`` of each secret replaced, in order.
        mask_length: Length of one mask.

    Example:
        >>> masked = SecretMasker(["hunter2-hunter2"], token_patterns=False).masked(
        ...     "pw=hunter2-hunter2 ok")
        >>> masked.text, masked.position(0), masked.position(8), masked.position(19)
        ('pw=•••••• ok', 0, 9, 10)
    """

    text: str
    masks: tuple[tuple[int, int, int], ...] = ()
    mask_length: int = 0

    def position(self, raw: int) -> int:
        """Where ``raw`` (an offset into the raw text) is in the masked text; an offset
        inside a secret moves to the end of its mask, so no piece of it is on either side."""
        index = bisect_right(self.masks, (raw, raw, raw)) - 1
        if index < 0:
            return raw
        start, end, masked_start = self.masks[index]
        if raw == start:
            return masked_start
        masked_end = masked_start + self.mask_length
        return masked_end if raw < end else masked_end + raw - end


class SecretMasker:
    """Replaces secrets in text and JSON-like values with a mask.

    Args:
        secrets: Secret values from configuration.
        environ: Environment to read sensitive variables from, a mapping or (name, value)
            pairs (``None``: none).
        env_name_patterns: Which variable names are sensitive.
        token_patterns: Also mask the well-known token shapes of :data:`TOKEN_PATTERN`.
        min_length: Values shorter than this are ignored.
        mask: What each secret becomes.

    Example:
        >>> SecretMasker(["s3cr3t!"]).mask_value({"text": ["a s3cr3t!"], "n": 1})
        {'text': ['a ••••••'], 'n': 1}
    """

    def __init__(
        self,
        secrets: Iterable[str] = (),
        environ: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
        *,
        env_name_patterns: Sequence[str] = DEFAULT_ENV_NAME_PATTERNS,
        token_patterns: bool = True,
        min_length: int = 6,
        mask: str = DEFAULT_MASK,
    ) -> None:
        values = {value.strip() for value in secrets}
        # Pairs as well as a mapping: several environments may give one name two values.
        variables = environ.items() if isinstance(environ, Mapping) else environ or ()
        for name, value in variables:
            if any(fnmatchcase(name.upper(), pattern.upper()) for pattern in env_name_patterns):
                values.add(value.strip())
        literals = sorted((v for v in values if len(v) >= min_length), key=lambda v: (-len(v), v))
        parts = [re.escape(literal) for literal in literals]
        if token_patterns:
            parts.append(TOKEN_PATTERN)
        self._pattern = re.compile("|".join(parts), re.VERBOSE) if parts else None
        self._literals = tuple(literals)
        self._literal_starts = frozenset(literal[0] for literal in literals)
        self._tokens = token_patterns
        self._mask = mask

    def mask(self, text: str) -> str:
        """``text`` with every secret replaced by the mask."""
        if self._pattern is None or not text:
            return text
        spans = self._spans(text, 0)
        return self._render(text, 0, len(text), spans) if spans else text

    def masked(self, text: str) -> MaskedText:
        """:meth:`mask`, with where each secret was (to carry a cursor over)."""
        if self._pattern is None or not text:
            return MaskedText(text)
        spans = self._spans(text, 0)
        if not spans:
            return MaskedText(text)
        masks: list[tuple[int, int, int]] = []
        rendered = self._render(text, 0, len(text), spans, masks)
        return MaskedText(rendered, tuple(masks), len(self._mask))

    def contains_secret(self, text: str) -> bool:
        """Whether ``text`` holds anything :meth:`mask` would replace."""
        return self._pattern is not None and self._pattern.search(text) is not None

    def mask_value(self, value: Any) -> Any:
        """A copy of a JSON-like value with every string masked.

        This is the one rule for every MIME type of an output (outputs on their way into
        the notebook, a kernel keeper's journal, every read of a cell): each string is
        masked, SVG, HTML, LaTeX, Markdown, JavaScript and any ``text/*`` as the text they
        are; under a JSON type keys are masked too; a PNG's text chunks are masked, its
        pixels kept; other binary types are kept. The rule per MIME type is in
        :mod:`.mime_masking`. Other dict keys are kept (they name fields, not values).
        """
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, Mapping):
            return {key: mask_entry(self, key, item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.mask_value(item) for item in value]
        return value

    def stream(self) -> StreamMasker:
        """A :class:`StreamMasker` for one chunked stream."""
        return StreamMasker(self)

    # -- internals shared with StreamMasker ------------------------------------------------

    def _spans(self, text: str, start: int) -> list[Span]:
        """Every match starting at or after ``start``, overlapping ones included."""
        pattern = self._pattern
        if pattern is None:
            return []
        spans: list[Span] = []
        found = pattern.search(text, start)
        while found is not None:
            begin = found.start()
            secret = found.start("bearer") if self._tokens and found["bearer"] else begin
            spans.append((begin, secret, found.end()))
            found = pattern.search(text, begin + 1)
        return spans

    def _render(
        self,
        text: str,
        start: int,
        stop: int,
        spans: list[Span],
        masks: list[tuple[int, int, int]] | None = None,
    ) -> str:
        """``text[start:stop]`` with the (merged) secret parts of ``spans`` masked; each
        mask's ``(raw start, raw end, masked start)`` is added to ``masks`` if given."""
        pieces: list[str] = []
        written = 0
        position = start
        for _, secret, end in sorted(spans, key=lambda span: span[1]):
            if end <= position:
                continue
            if secret >= position:
                pieces.append(text[position:secret])
                written += secret - position
                if masks is not None:
                    masks.append((secret, end, written))
                pieces.append(self._mask)
                written += len(self._mask)
            elif masks:  # overlaps the secret before it: that mask now covers both
                masks[-1] = (masks[-1][0], end, masks[-1][2])
            position = end
        pieces.append(text[position:stop])
        return "".join(pieces)

    def _hold_from(self, text: str, start: int) -> int:
        """Where the tail of ``text`` that could still become (part of) a secret begins."""
        end = len(text)
        hold = end
        for literal_start in range(max(start, end - len(self._longest) + 1), end):
            first = text[literal_start]
            if first not in self._literal_starts:
                continue
            tail = text[literal_start:]
            if any(lit.startswith(tail) for lit in self._literals if lit[0] == first):
                hold = literal_start
                break
        if self._tokens:
            hold = min(hold, self._token_hold(text, start))
        return hold

    @property
    def _longest(self) -> str:
        return self._literals[0] if self._literals else ""

    def _token_hold(self, text: str, start: int) -> int:
        end = len(text)
        low = max(start, end - MAX_TOKEN_CHARS)
        window = text[low:]
        run_start = end - _match_len(_TOKEN_RUN, window[::-1])
        bearer_run = end - _match_len(_BEARER_CHARS, window[::-1])
        bearer = _BEARER_TAIL.search(text, max(low, bearer_run - 40), bearer_run)
        if bearer is not None and bearer.start() >= start:
            return bearer.start()
        for candidate in _TOKEN_START.finditer(text, run_start, end):
            index = candidate.start()
            short = end - index
            for prefix in _TOKEN_PREFIXES:
                if (
                    text.startswith(prefix, index)
                    if short >= len(prefix)
                    else (prefix.startswith(text[index:]))
                ):
                    return index
        return end


def _match_len(pattern: re.Pattern[str], text: str) -> int:
    found = pattern.match(text)
    return found.end() if found is not None else 0


class StreamMasker:
    """Masks a chunked stream so that a secret split across chunks is still masked.

    :meth:`feed` returns what is safe to emit now; a tail that could be the start of a secret
    is held back (at most the longest configured secret minus one character, or
    :data:`MAX_TOKEN_CHARS` for a run of token characters that could begin a token shape).
    Concatenating every :meth:`feed` and the final :meth:`flush` gives exactly
    ``masker.mask(whole_text)``.

    Example:
        >>> stream = SecretMasker(["0123456789"], token_patterns=False).stream()
        >>> stream.feed("id 01234"), stream.feed("56789 ok\\n"), stream.flush()
        ('id ', '•••••• ok\\n', '')
    """

    def __init__(self, masker: SecretMasker) -> None:
        self._masker = masker
        self._context = ""  # raw text already emitted, for lookbehinds
        self._pending = ""

    def feed(self, chunk: str) -> str:
        """Add ``chunk``; return the masked text that can no longer change."""
        if self._masker._pattern is None:
            return chunk
        text = self._context + self._pending + chunk
        start = len(self._context)
        spans = self._masker._spans(text, start)
        cut = self._masker._hold_from(text, start)
        for begin, _, end in spans:
            if end == len(text):
                cut = min(cut, begin)
        moved = True
        while moved:
            moved = False
            for begin, _, end in spans:
                if begin < cut < end:
                    cut, moved = begin, True
        return self._emit(text, start, cut, [span for span in spans if span[2] <= cut])

    def flush(self) -> str:
        """The rest of the stream, masked; the masker can then start a new stream."""
        text = self._context + self._pending
        start = len(self._context)
        spans = self._masker._spans(text, start)
        out = self._emit(text, start, len(text), spans)
        self._context = ""
        return out

    def _emit(self, text: str, start: int, cut: int, spans: list[Span]) -> str:
        self._pending = text[cut:]
        self._context = text[max(0, cut - _CONTEXT_CHARS) : cut]
        if cut == start:
            return ""
        return self._masker._render(text, start, cut, spans)

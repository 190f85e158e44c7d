"""What a kept kernel writes to its file descriptors, masked, into its ``kernel.log``.

The kernel's stdout and stderr below Python (``os.system``, C libraries, ipykernel's own
warnings) are not IOPub messages: they went straight into ``kernel.log``, and a secret a
cell printed that way stayed there in clear, although the notebook, the journal and the
outputs store masked it. The keeper now gives the kernel a pipe and writes what comes
through it to the log a line at a time, each line masked whole by the same masker as the
journal. A line longer than ``MAX_LINE`` is written in parts (a secret cut across two
parts may stay), and a last line without its newline when the kernel ends is written too.

Example:
    >>> import tempfile
    >>> from jupyter_loop.secrets import SecretMasker
    >>> log = Path(tempfile.mkdtemp()) / "kernel.log"
    >>> read_end, write_end = os.pipe()
    >>> output = KernelOutput(read_end, log, SecretMasker(["hunter2-hunter2"]))
    >>> _ = os.write(write_end, b"one hunter2-")
    >>> output.read()
    >>> _ = os.write(write_end, b"hunter2 two\\nthree")
    >>> os.close(write_end)
    >>> output.read(); output.close()
    >>> log.read_text()
    'one •••••• two\\nthree'
"""

from __future__ import annotations

import os
from pathlib import Path

from ..owner_only import open_private
from ..secrets import SecretMasker

MAX_LINE = 64 * 1024
"""Bytes held waiting for a newline before they are written anyway."""

PORT_TAKEN = "ZMQError: Address already in use"
"""What ipykernel prints when a port it was given is bound by another process (jupyter_client
picks free ports, closes them and the kernel binds them a second later: on a busy server
another process can take one meanwhile)."""


class KernelOutput:
    """Reads the kernel's output pipe (non-blocking) and appends it, masked, to the log."""

    def __init__(self, fd: int, log: Path, masker: SecretMasker | None) -> None:
        self.fd = fd
        os.set_blocking(fd, False)
        self._log = open_private(log, "ab")
        self._masker = masker
        self._pending = b""
        self._open = True
        self.port_taken = False  # the kernel said a port it was given is taken (PORT_TAKEN)

    def read(self) -> None:
        """Write whatever whole lines the kernel has written since (never blocks)."""
        while self._open:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            if not chunk:  # the kernel closed its end (it exited)
                self._open = False
                break
            self._pending += chunk
            cut = self._pending.rfind(b"\n") + 1
            if not cut and len(self._pending) >= MAX_LINE:
                cut = len(self._pending)
            if cut:
                self._write(self._pending[:cut])
                self._pending = self._pending[cut:]

    def close(self) -> None:
        """Write what is left (a last line without its newline) and close."""
        self.read()
        if self._pending:
            self._write(self._pending)
            self._pending = b""
        self._log.close()
        os.close(self.fd)

    def _write(self, data: bytes) -> None:
        text = data.decode("utf-8", errors="replace")
        self.port_taken = self.port_taken or PORT_TAKEN in text
        if self._masker is not None:
            text = self._masker.mask(text)
        self._log.write(text.encode("utf-8"))
        self._log.flush()

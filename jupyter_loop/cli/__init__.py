"""``jupyter loop``: the terminal client of a running server (see :mod:`.main`)."""

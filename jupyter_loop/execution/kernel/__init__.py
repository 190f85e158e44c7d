"""A kernel as the run queue sees it: our own connection to it (over ZeroMQ or a gateway's
websocket), the line that outlives its restarts, its lives, and the silent requests that read
its variables.

The queue, the runs and the restart above talk to a kernel through :mod:`.line` and
:mod:`.connection` only; how a kernel is reached (:mod:`.zmq_link`, :mod:`.gateway_link`)
stays inside this package.
"""

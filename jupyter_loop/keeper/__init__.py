"""Kernels that outlive the server: a keeper process per local kernel.

A keeper (:mod:`.process`) is started by our kernel provisioner (:mod:`.provisioner`) in
place of the kernel and starts the kernel as its own child, so ipykernel's parent poller
watches the keeper, not the server. It journals every IOPub message of an execute
request on disk (:mod:`.journal`), holds the kernel's registry entry (:mod:`.registry`)
and, when no server has come back within the orphan timeout, shuts the kernel down. A
server that starts finds the keepers alive and adopts their kernels (:mod:`.adoption`).
"""

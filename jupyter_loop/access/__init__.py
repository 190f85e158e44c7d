"""Who may do what: the one rights table, who is asking, and the scoped tokens outside
agents hold.

Every channel asks :mod:`.rights` (never the authorizer directly), names the asker through
:mod:`.identity`, and a token of :mod:`.tokens` only narrows what its holder's grants allow.
Files only their owner may read (``owner_only``) stay at the root: that is the disk's
access, used by every store, not a person's.
"""

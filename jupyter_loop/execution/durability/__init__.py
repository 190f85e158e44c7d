"""What keeps runs across a server's death: the ledger of runs in flight (:mod:`.ledger`),
the journal of their outputs (:mod:`.wal`), and, at the next start, each run left behind
followed again (:mod:`.kept_runs`, :mod:`.gateway_rejoin`) or ended and replayed into its
cell (:mod:`.recovery`), as :mod:`.restart` decides.
"""

"""Each run's outputs kept on the server in full, when the notebook keeps only part of them:
the store on disk (:mod:`.store`), what writes a run into it as it prints (:mod:`.recorder`,
:mod:`.run_record`), and the REST route that reads it back (:mod:`.handlers`).
"""

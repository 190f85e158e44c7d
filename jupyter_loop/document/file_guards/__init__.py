"""What keeps a notebook's file and its live document from undoing each other: a save the
room did not see, a save the tab's hash check would miss, a file that lags its room's store,
and a tab back from offline after the file was reloaded under it.

Each guard hooks the contents manager.
"""

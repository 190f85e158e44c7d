"""Cells run on the server: the run queue per kernel, kernel connections, outputs written
into the live notebook, and what keeps them across closed tabs and restarts."""

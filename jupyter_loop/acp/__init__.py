"""Agents that speak the Agent Client Protocol (ACP), hosted by the server.

The Jupyter server is the ACP client: it starts the agent's process (``catalog``), owns
its session (``session``), streams what the agent says into the notebook's shared
conversation (``updates``, ``turn``), and answers the agent's own requests under the
server's rules (``client``): a notebook is read live and written as proposals, a
permission request is an approval card. ``service`` owns the sessions and their
processes; ``handlers`` is the REST face.
"""

"""What is on disk: the SQLite session database, off the event loop.

``database`` is ``SessionDatabase`` (sessions, history, transcript, issued call ids)
and its rows, ``schema`` the file, the schema and its migrations, ``worker`` the thread
every store call runs on, and ``transcript`` the consolidated ``session/update``
payloads a ``session/load`` replays. It imports nothing else of the agent.
"""

"""Session features the user invokes: slash commands, compaction, model switch, fork, plan.

``commands`` announces and parses slash commands (built-in and the user's Markdown
ones) and ``slash`` runs the built-ins; ``compaction`` compacts a session before a
request that would not fit (or on ``/compact``); ``switch`` hands the conversation to
another backend; ``plan`` ends a turn in plan mode and switches modes; ``fork`` copies
a stored session. A prompt turn runs them, so they import the session and the store,
never the turn.
"""

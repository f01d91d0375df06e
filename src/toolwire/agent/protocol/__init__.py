"""The wire to the editor: what crosses stdio and how the agent reaches the client.

``transport`` frames newline-delimited JSON-RPC and guards it (``envelope`` checks each
message before the SDK sees it), ``handshake`` is the ``initialize`` answer as plain
JSON, ``outbox`` writes a session's ``session/update`` lines in order, ``ids`` keeps the
ids the editor sees unique, and ``ports`` gives the tools the editor's file system and
terminals. Nothing here knows a session, a turn or the store.
"""

"""The ACP agent behind ``toolwire acp``: the official SDK's connection around the update
engine (``toolwire.updates``), the tools, the backends and the session store."""

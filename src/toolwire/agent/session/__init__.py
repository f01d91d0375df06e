"""One session's state and the services every part of a session shares.

``state`` holds ``Session`` (one ACP session in memory) and ``Runtime`` (what the
sessions of one connection share), the prompt's message and the system prompt;
``turn_state`` the idle/running/cancelling state of its prompt turn; ``instructions``
the ``AGENTS.md`` files its system prompt carries; ``permissions`` its modes and the
permission question; ``notify`` how the user is told and asked something; ``mcp_calls``
its MCP servers, their tools and calls. It sits on the protocol and the store, below
the features and the turn that use it.
"""

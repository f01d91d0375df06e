"""Decoders for tool calls embedded in a model's text (models served without tool calling).

Each is fed text (``str``) and returns normalized events: ``TextDelta`` for the visible
text, and ``ToolCallStart`` / ``ToolCallDelta`` / ``ToolCallEnd`` per call (``StreamError``
for markup that began a call header and broke). They never emit ``MessageEnd``: the
stream around them does.

* ``XmlTagsDecoder``: ``<tool><tool_name>NAME</tool_name><arguments>...</arguments></tool>``
* ``HermesDecoder``: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
* ``Qwen3CoderDecoder``: ``<tool_call><function=NAME><parameter=KEY>...</function></tool_call>``

The Hermes and Qwen3-Coder decoders take the declared tools (name -> parameters schema):
with them they also read the forms other servers accept for those tools (docs/decoding.md).

Every format, these three and the open-weight families' (``llama``, ``pythonic``,
``mistral``, ``deepseek``, ``jsonlist``), is listed in ``toolwire.decode.textformats``,
which imports its module on first use.
"""

from __future__ import annotations

from toolwire.decode.tags.hermes import HermesDecoder
from toolwire.decode.tags.qwen import Qwen3CoderDecoder
from toolwire.decode.tags.xml import XmlTagsDecoder

__all__ = ["HermesDecoder", "Qwen3CoderDecoder", "XmlTagsDecoder"]

"""Decoders for tool calls embedded in a model's text (models served without tool calling).

Each is fed text (``str``) and returns normalized events: ``TextDelta`` for the visible
text, and ``ToolCallStart`` / ``ToolCallDelta`` / ``ToolCallEnd`` per call (``StreamError``
for markup that began a call header and broke). They never emit ``MessageEnd``: the
stream around them does.

* ``XmlTagsDecoder``: ``<tool><tool_name>NAME</tool_name><arguments>...</arguments></tool>``
* ``HermesDecoder``: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
* ``Qwen3CoderDecoder``: ``<tool_call><function=NAME><parameter=KEY>...</function></tool_call>``
  (also vLLM's ``qwen3_xml``: the same markup)
* ``SeedOssDecoder``: the same inside ``<seed:tool_call>``, ``<seed:think>`` left as text
* ``Glm45Decoder``: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>``
* ``MiniMaxM2Decoder``: ``<minimax:tool_call><invoke name="NAME"><parameter name="K">V...``
* ``KimiK2Decoder``: ``<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0...``
* ``HarmonyDecoder``: gpt-oss messages, ``...to=functions.NAME...<|message|>{json}<|call|>``

All but the XML-tags decoder take the declared tools (name -> parameters schema): the
markup formats type their string values by them, and the Hermes and Qwen3-Coder decoders
also read the forms other servers accept for those tools (docs/decoding.md).

Every format, these and the JSON families' (``llama``, ``pythonic``, ``mistral``,
``deepseek``, ``jsonlist``), is listed in ``toolwire.decode.textformats``, which imports
its module on first use.
"""

from __future__ import annotations

from toolwire.decode.tags.glm45 import Glm45Decoder
from toolwire.decode.tags.harmony import HarmonyDecoder
from toolwire.decode.tags.hermes import HermesDecoder
from toolwire.decode.tags.kimi_k2 import KimiK2Decoder
from toolwire.decode.tags.minimax_m2 import MiniMaxM2Decoder
from toolwire.decode.tags.qwen import Qwen3CoderDecoder
from toolwire.decode.tags.seed_oss import SeedOssDecoder
from toolwire.decode.tags.xml import XmlTagsDecoder

__all__ = [
    "Glm45Decoder",
    "HarmonyDecoder",
    "HermesDecoder",
    "KimiK2Decoder",
    "MiniMaxM2Decoder",
    "Qwen3CoderDecoder",
    "SeedOssDecoder",
    "XmlTagsDecoder",
]

"""vLLM's ``qwen3_xml`` parser reads the Qwen3-Coder markup: ``Qwen3CoderDecoder`` serves it."""

from __future__ import annotations

from tests.decode.formats_support import check_format
from tests.helpers import needs_shared
from toolwire.decode.tags import Qwen3CoderDecoder


@needs_shared
def test_the_peers_cases_under_every_chunking() -> None:
    # Its own tests (test_qwen3xml_tool_parser.py) and the suite it shares with the
    # Qwen3-Coder parser: every case agrees, with the tools the peer's parser had.
    check_format("qwen3_xml", Qwen3CoderDecoder, {})

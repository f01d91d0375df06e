"""A tools/call result as ACP content (the editor) and text (the model)."""

from __future__ import annotations

import base64

from toolwire.mcp.result import error_result, map_result

PNG = base64.b64encode(b"\x89PNG" + bytes(12 * 1024)).decode()


def test_text_becomes_acp_text_and_the_model_text() -> None:
    result = map_result({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})
    assert result.content == [
        {"type": "content", "content": {"type": "text", "text": "a"}},
        {"type": "content", "content": {"type": "text", "text": "b"}},
    ]
    assert result.text == "a\nb"
    assert (result.raw_output, result.is_error) == (None, False)


def test_an_image_is_acp_image_content_and_a_note_for_the_model() -> None:
    result = map_result({"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]})
    assert result.content == [
        {"type": "content", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}}
    ]
    assert result.text == "[image: image/png, 12 KB]"


def test_resource_links_and_embedded_resources_keep_their_kind() -> None:
    link = {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"}
    text = {"type": "resource", "resource": {"uri": "file:///b.txt", "text": "bee"}}
    blob = {"type": "resource", "resource": {"uri": "file:///c.bin", "blob": PNG}}
    result = map_result({"content": [link, text, blob]})
    blocks = [c["content"] for c in result.content]
    assert blocks[0] == link
    assert blocks[1] == text
    assert blocks[2] == blob
    assert result.text.splitlines() == [
        "[resource link: a <file:///a.txt>]",
        "[resource: file:///b.txt]",
        "bee",
        "[resource file:///c.bin: unknown type, 12 KB]",
    ]


def test_structured_content_is_the_raw_output_and_is_error_carries_over() -> None:
    result = map_result(
        {
            "content": [{"type": "text", "text": "boom"}],
            "structuredContent": {"ok": False},
            "isError": True,
        }
    )
    assert result.raw_output == {"ok": False}
    assert result.is_error


def test_structured_content_alone_is_shown_to_the_model_as_json() -> None:
    assert map_result({"content": [], "structuredContent": {"n": 1}}).text == '{"n": 1}'


def test_a_huge_text_is_capped_head_and_tail_for_both() -> None:
    huge = "start\n" + "x" * 100_000 + "\nend"
    result = map_result({"content": [{"type": "text", "text": huge}]}, max_output_bytes=1000)
    assert result.text.startswith("start\n")
    assert result.text.endswith("\nend")
    assert "bytes not shown: output capped at 1,000 bytes" in result.text
    assert len(result.content[0]["content"]["text"].encode()) < 1100


def test_unknown_blocks_are_noted_and_errors_are_text() -> None:
    result = map_result({"content": [{"type": "hologram"}]})
    assert (result.content, result.text) == ([], "[hologram content not shown]")
    failed = error_result("server gone")
    assert failed.is_error
    assert failed.text == "server gone"


def test_large_structured_content_is_raw_output_as_capped_json_text() -> None:
    rows = {"rows": [{"id": i, "name": f"row {i}"} for i in range(20_000)]}
    result = map_result({"content": [], "structuredContent": rows}, max_output_bytes=4_000)
    assert isinstance(result.raw_output, str)
    assert len(result.raw_output.encode()) < 4_200
    assert result.raw_output.startswith('{"rows": [{"id": 0, "name": "row 0"}')
    assert "bytes not shown: output capped at 4,000 bytes" in result.raw_output
    assert result.raw_output.endswith('{"id": 19999, "name": "row 19999"}]}')
    small = map_result({"content": [], "structuredContent": {"ok": True}}, max_output_bytes=4_000)
    assert small.raw_output == {"ok": True}

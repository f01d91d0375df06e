"""One set of key shapes: what ``toolwire config`` masks, every log, error and cassette
hides too, and prose that error messages carry stays readable."""

from __future__ import annotations

import pytest

from toolwire.secrets import REDACTED, mask_keys, scrub

KEYS = (
    "sk-proj-4fQ9xLm2Zt7Rb1Kc8Vn3Hw6Yd",
    "ghp_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78",
    "glpat-Ab12Cd34Ef56Gh78Ij90",
    "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp",
    "AKIAIOSFODNN7EXAMPLE",
    "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUv",
)


@pytest.mark.parametrize("key", KEYS)
def test_a_key_in_an_error_is_hidden_whole_and_in_config_output_as_a_stub(key: str) -> None:
    text = f"upstream said: invalid credentials {key} (check your settings)"
    scrubbed = scrub(text)
    assert key not in scrubbed
    assert REDACTED in scrubbed
    assert scrubbed.startswith("upstream said: invalid credentials ")
    masked = mask_keys(text)
    assert key not in masked
    assert key[:4] + "…" in masked


@pytest.mark.parametrize(
    "prose",
    [
        "basic authentication failed for this endpoint",
        "the token estimate exceeded the window",
        "prompt is too long: 210000 tokens > 200000 maximum",
    ],
)
def test_prose_about_tokens_and_authentication_is_left_as_it_is(prose: str) -> None:
    assert scrub(prose) == prose
    assert mask_keys(prose) == prose


def test_an_auth_scheme_keeps_its_label_and_loses_its_value() -> None:
    for value in ("Bearer zzzzzzzzzzzz", "token 0123456789abcdef"):
        scrubbed = scrub(f"Authorization: {value}")
        assert scrubbed.startswith("Authorization: ")
        assert value.split()[1] not in scrubbed

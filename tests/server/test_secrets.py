"""Secret masking: configured values, sensitive environment variables, token shapes, streams."""

from __future__ import annotations

import random
import string

from jupyter_loop.secrets import DEFAULT_MASK, SecretMasker

M = DEFAULT_MASK
OPENAI = "sk-proj-" + "A1b2C3d4" * 5
GITHUB = "ghp_" + "Zz09" * 9
AWS = "AKIAIOSFODNN7EXAMPLE"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"


def test_masks_configured_secret() -> None:
    assert SecretMasker(["hunter2-hunter2"]).mask("pw: hunter2-hunter2.") == f"pw: {M}."


def test_ignores_values_shorter_than_min_length() -> None:
    masker = SecretMasker(["12345", "1"], token_patterns=False)
    assert masker.mask("12345 1") == "12345 1"


def test_min_length_is_configurable() -> None:
    assert SecretMasker(["abc"], min_length=3).mask("x abc y") == f"x {M} y"


def test_custom_mask() -> None:
    assert SecretMasker(["hunter2-hunter2"], mask="***").mask("hunter2-hunter2") == "***"


def test_masks_sensitive_environment_values_by_name() -> None:
    environ = {
        "OPENAI_API_KEY": "value-of-api-key",
        "GH_TOKEN": "value-of-token",
        "CLIENT_SECRET": "value-of-secret",
        "DB_PASSWORD_FILE": "value-of-password",
        "aws_secret_access_key": "value-of-aws",
    }
    masker = SecretMasker(environ=environ, token_patterns=False)
    assert masker.mask(" ".join(environ.values())) == " ".join([M] * 5)


def test_leaves_other_environment_values() -> None:
    masker = SecretMasker(environ={"HOME": "/home/someone", "PATH": "/usr/bin"})
    assert masker.mask("/home/someone /usr/bin") == "/home/someone /usr/bin"


def test_env_name_patterns_can_be_replaced() -> None:
    masker = SecretMasker(environ={"MY_VAR": "value-123", "X_TOKEN": "tok-456"},
                          env_name_patterns=["MY_*"])  # fmt: skip
    assert masker.mask("value-123 tok-456") == f"{M} tok-456"


def test_environment_values_are_stripped() -> None:
    masker = SecretMasker(environ={"A_TOKEN": "  value-123\n"}, token_patterns=False)
    assert masker.mask("[value-123]") == f"[{M}]"


def test_the_same_value_from_config_and_environment_masks_once() -> None:
    masker = SecretMasker(["value-123", "value-123"], environ={"A_TOKEN": "value-123"})
    assert masker.mask("[value-123]") == f"[{M}]"


def test_masks_openai_key() -> None:
    assert SecretMasker().mask(f'key="{OPENAI}"') == f'key="{M}"'


def test_masks_classic_openai_key() -> None:
    assert SecretMasker().mask("sk-" + "a" * 48) == M


def test_masks_github_tokens() -> None:
    fine_grained = "github_pat_" + "a1B2" * 10
    assert SecretMasker().mask(f"{GITHUB} {fine_grained}") == f"{M} {M}"


def test_masks_aws_access_key_id() -> None:
    assert SecretMasker().mask(f"id={AWS}\n") == f"id={M}\n"


def test_masks_slack_google_and_hugging_face_tokens() -> None:
    text = "xoxb-1234567890-abcdef AIza" + "Sy" * 17 + "A hf_" + "q" * 34
    assert SecretMasker().mask(text) == f"{M} {M} {M}"


def test_masks_jwt() -> None:
    assert SecretMasker().mask(f"token: {JWT}") == f"token: {M}"


def test_masks_bearer_token_but_keeps_scheme() -> None:
    text = "Authorization: Bearer abcDEF0123456789.xyz"
    assert SecretMasker().mask(text) == f"Authorization: Bearer {M}"


def test_bearer_in_prose_is_kept() -> None:
    text = "the bearer of this letter is trustworthy"
    assert SecretMasker().mask(text) == text


def test_token_inside_a_longer_word_is_kept() -> None:
    text = "task-abcdefghijklmnopqrstuvwxyz AKIAIOSFODNN7EXAMPLEX"
    assert SecretMasker().mask(text) == text


def test_token_patterns_can_be_disabled() -> None:
    assert SecretMasker(token_patterns=False).mask(OPENAI) == OPENAI


def test_nested_secrets_mask_fully() -> None:
    masker = SecretMasker(["hunter2", "hunter2-hunter2"], token_patterns=False)
    assert masker.mask("hunter2-hunter2") == M


def test_overlapping_secrets_mask_as_one() -> None:
    masker = SecretMasker(["abcdef", "cdefgh"], token_patterns=False)
    assert masker.mask("[abcdefgh]") == f"[{M}]"


def test_adjacent_secrets_mask_separately() -> None:
    masker = SecretMasker(["abcdef", "ghijkl"], token_patterns=False)
    assert masker.mask("abcdefghijkl") == M + M


def test_regex_characters_in_secrets_are_literal() -> None:
    masker = SecretMasker(["a.b*c+d?"], token_patterns=False)
    assert masker.mask("a.b*c+d? aXbbcd") == f"{M} aXbbcd"


def test_contains_secret() -> None:
    masker = SecretMasker(["hunter2-hunter2"])
    found = masker.contains_secret("x hunter2-hunter2"), masker.contains_secret("x")
    assert found == (True, False)


def test_masker_without_secrets_returns_text() -> None:
    masker = SecretMasker(token_patterns=False)
    assert (masker.mask(OPENAI), masker.contains_secret(OPENAI)) == (OPENAI, False)


def test_mask_value_masks_a_whole_output() -> None:
    output = {
        "output_type": "error",
        "ename": "ValueError",
        "evalue": "bad key hunter2-hunter2",
        "traceback": ["line 1", "\x1b[31mhunter2-hunter2\x1b[0m"],
    }
    assert SecretMasker(["hunter2-hunter2"]).mask_value(output) == {
        "output_type": "error",
        "ename": "ValueError",
        "evalue": f"bad key {M}",
        "traceback": ["line 1", f"\x1b[31m{M}\x1b[0m"],
    }


def test_mask_value_masks_data_bundles_but_not_images() -> None:
    # A key shape can occur inside base64: an image's payload is never masked as text
    # (a PNG's text chunks are: see test_mime_masking.py).
    payload = "/9j/AIza" + "Q" * 35
    output = {
        "output_type": "display_data",
        "data": {"text/plain": "AIza" + "Q" * 35, "image/jpeg": payload},
        "metadata": {"note": ("hunter2-hunter2",), "count": 3, "flag": None},
    }
    assert SecretMasker(["hunter2-hunter2"]).mask_value(output) == {
        "output_type": "display_data",
        "data": {"text/plain": M, "image/jpeg": payload},
        "metadata": {"note": [M], "count": 3, "flag": None},
    }


def test_never_returns_secret_for_tricky_inputs() -> None:
    secret = "p4ss-w0rd-é"
    masker = SecretMasker([secret])
    inputs = [
        secret,
        secret + " tail",
        "head " + secret,
        secret * 3,
        secret + secret[:-1],
        f'{{"key": "{secret}", "other": "{secret}"}}',
        f"üñí{secret}çødé",
        f"\x1b[31m{secret}\x1b[0m",
        "\n".join([secret] * 4),
    ]
    assert [secret in masker.mask(text) for text in inputs] == [False] * len(inputs)


def test_masks_ten_megabytes_whole() -> None:
    """Ten megabytes of words with the secrets at the end: only the secrets change.

    How fast is a figure of ``bench/masking.py`` (goal under a second), not a test: a timed
    assertion fails whenever the CI machine is busy.
    """
    rng = random.Random(1)
    words = ["".join(rng.choices(string.ascii_letters, k=rng.randint(2, 9))) for _ in range(500)]
    secrets = ["hunter2hunter2", "s3cr3t-value", "P@ssw0rd!!", "0123456789ab", "zzTOPzz99"]
    body = " ".join(rng.choices(words, k=1_800_000))[:10_000_000]
    masked = SecretMasker(secrets).mask(body + " " + " ".join(secrets))
    assert masked == body + " " + " ".join([M] * 5)


# -- streams -----------------------------------------------------------------------------


def _feed_all(masker: SecretMasker, chunks: list[str]) -> list[str]:
    stream = masker.stream()
    return [stream.feed(chunk) for chunk in chunks] + [stream.flush()]


def test_stream_masks_secret_split_across_chunks() -> None:
    masker = SecretMasker(["hunter2-hunter2"])
    assert _feed_all(masker, ["pw hunter2-h", "unter2 done\n"]) == ["pw ", f"{M} done\n", ""]


def test_stream_emits_everything_when_tail_cannot_start_a_secret() -> None:
    masker = SecretMasker(["hunter2-hunter2"])
    assert _feed_all(masker, ["progress 10%\n", "done\n"]) == ["progress 10%\n", "done\n", ""]


def test_stream_holds_back_less_than_the_longest_secret() -> None:
    masker = SecretMasker(["hunter2-hunter2"], token_patterns=False)
    stream = masker.stream()
    stream.feed("x" * 100 + "hunter2-hunter")
    assert stream.flush() == "hunter2-hunter"


def test_stream_masks_token_split_across_chunks() -> None:
    masker = SecretMasker()
    chunks = ["key=" + OPENAI[:5], OPENAI[5:20], OPENAI[20:] + "\n"]
    assert "".join(_feed_all(masker, chunks)) == f"key={M}\n"


def test_stream_masks_bearer_split_after_scheme() -> None:
    masker = SecretMasker()
    chunks = ["Authorization: Bearer ", "0123456789abcdefXYZ\n"]
    assert "".join(_feed_all(masker, chunks)) == f"Authorization: Bearer {M}\n"


def test_stream_flush_resets_for_next_stream() -> None:
    stream = SecretMasker(["hunter2-hunter2"]).stream()
    stream.feed("a hunter2")
    stream.flush()
    assert (stream.feed("b\n"), stream.flush()) == ("b\n", "")


def test_stream_without_secrets_passes_chunks_through() -> None:
    stream = SecretMasker(token_patterns=False).stream()
    assert stream.feed("sk-") == "sk-"


def test_stream_output_equals_mask_of_whole_text_for_any_split() -> None:
    masker = SecretMasker(
        ["hunter2-hunter2", "hunter2-h", "abcdef", "cdefgh", "pa ss\nword"],
        environ={"X_TOKEN": "tok-value-1"},
    )
    pieces = [
        *("hunter2-hunter2", "hunter2-h", "abcdefgh", "cdefgh", "pa ss\nword", "tok-value-1"),
        *(" ", "\n", ".", "-", "x", "é", "s", "sk", "sk-", "Bear", "hunter", "abc", "eyJ"),
        *(OPENAI, GITHUB, AWS, JWT, "Bearer 0123456789abcdefgh", "xoxb-123456789012"),
        *("Authorization: bearer  ab/cd+ef=1234567890", "hf_" + "z" * 31, "AIza" + "Q" * 35),
        *("github_pat_" + "a" * 22, "sk-" + "b" * 300),
    ]
    rng = random.Random(20240611)
    mismatches = []
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(0, 6))))
        bounds = [0, *cuts, len(text)]
        chunks = [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
        if "".join(_feed_all(masker, chunks)) != masker.mask(text):
            mismatches.append((text, cuts))
    assert mismatches == []


def test_stream_one_character_at_a_time_equals_mask() -> None:
    masker = SecretMasker(["hunter2-hunter2"])
    text = f"a {OPENAI} b hunter2-hunter2 c Bearer 0123456789abcdefgh {JWT}\n"
    assert "".join(_feed_all(masker, list(text))) == masker.mask(text)

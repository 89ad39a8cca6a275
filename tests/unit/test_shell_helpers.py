"""Pure helpers of the app shell: prompt cleaning, token display, the pipeline diagram."""

from __future__ import annotations

import pytest

from core.prompt import MAX_PROMPT_CHARS, PromptProblem, clean_prompt
from ui.diagram import PipelineValues, dot_quote, pipeline_dot
from ui.tokens import display_token


def test_clean_prompt_drops_control_characters_but_keeps_newlines() -> None:
    cleaned = clean_prompt("a\x00b\x1bc\nd\te")
    assert cleaned.text == "abc\nd\te"
    assert cleaned.removed_control_chars == 2


@pytest.mark.parametrize("bad, code", [("", "empty"), ("   \n", "empty"), ("\x00\x01", "empty"),
                                       (b"bytes", "binary"), (None, "binary"),
                                       ("x" * (MAX_PROMPT_CHARS + 1), "too_long")])
def test_clean_prompt_refuses_bad_input(bad: object, code: str) -> None:
    with pytest.raises(PromptProblem) as info:
        clean_prompt(bad)
    assert info.value.code == code


def test_clean_prompt_keeps_html_as_plain_text() -> None:
    assert clean_prompt("<script>alert(1)</script>").text == "<script>alert(1)</script>"


def test_display_token_makes_whitespace_visible() -> None:
    assert display_token(" Paris") == "␣Paris"
    assert display_token("a\nb") == "a⏎b"
    assert display_token("") == "∅"
    assert display_token("首都") == "首都"


def test_dot_quote_escapes_quotes_backslashes_and_newlines() -> None:
    assert dot_quote('say "hi"\\ now\nok') == '"say \\"hi\\"\\\\ now ok"'


def _values(text: str) -> PipelineValues:
    return PipelineValues(text=text, tokens=["法国", "的"], ids=[5, 6], n_layer=4, n_head=4,
                          d_model=128, d_mlp=512, vocab_size=3000, positional="sinusoidal",
                          norm="layernorm", mlp="gelu", top_token="巴黎", top_prob=0.93)


def test_pipeline_dot_has_every_stage_and_live_values() -> None:
    labels = {k: k.upper() for k in ("text", "tokenizer", "ids", "embed", "pos", "add", "block", "ln1",
                                     "attn", "resid1", "ln2", "mlp", "resid2", "ln_final", "lm_head",
                                     "logits", "softmax", "sample", "append")}
    dot = pipeline_dot(_values("法国的"), labels, {"tokenization": "tokenization"})
    for key in labels:
        assert labels[key] in dot
    assert "巴黎" in dot and "p=0.93" in dot
    assert "2 × 128" in dot and "BLOCK × 4" in dot
    assert 'URL="./tokenization"' in dot
    assert "embeddings" not in dot  # no link to a page that does not exist


def test_pipeline_dot_cannot_be_broken_by_user_text() -> None:
    labels = {k: k for k in ("text", "tokenizer", "ids", "embed", "pos", "add", "block", "ln1",
                             "attn", "resid1", "ln2", "mlp", "resid2", "ln_final", "lm_head",
                             "logits", "softmax", "sample", "append")}
    dot = pipeline_dot(_values('"]; evil [label="x'), labels, {})
    assert '\\"]; evil [label=\\"x' in dot


def _labels() -> dict[str, str]:
    return {k: k.upper() for k in ("text", "tokenizer", "ids", "embed", "pos", "add", "block", "ln1",
                                   "attn", "resid1", "ln2", "mlp", "resid2", "ln_final", "lm_head",
                                   "logits", "softmax", "sample", "append", "add_rope")}


def test_rope_overview_rotates_q_k_and_adds_nothing() -> None:
    import dataclasses

    rope = dataclasses.replace(_values("法国的"), positional="rope", norm="rmsnorm", mlp="swiglu")
    dot = pipeline_dot(rope, _labels(), {})
    assert "pos -> add;" not in dot and "pos -> add [style=invis]" in dot  # nothing flows into the sum
    assert 'pos -> attn [style=dashed, constraint=false, label="rotates q, k"]' in dot
    assert "RoPE: rotates q, k in attention" in dot and "ADD_ROPE" in dot and "(nothing added)" in dot
    learned = pipeline_dot(_values("法国的"), _labels(), {})
    assert "pos -> add;" in learned and "pos -> attn" not in learned and "ADD_ROPE" not in learned


def test_pipeline_dot_translates_small_words_and_kinds() -> None:
    words = {"heads": "个头", "vocab": "词表", "residual": "残差", "top": "最高"}
    kinds = {"sinusoidal": "正弦位置编码", "layernorm": "层归一化", "gelu": "GELU 激活"}
    dot = pipeline_dot(_values("法国的"), _labels(), {}, words=words, kinds=kinds, font_size=15)
    for english in ("heads", "vocab", "residual", "top:", "sinusoidal", "layernorm", '"gelu'):
        assert english not in dot
    assert "4 个头" in dot and "正弦位置编码: 2 × 128" in dot and 'label="残差"' in dot
    assert "fontsize=15" in dot

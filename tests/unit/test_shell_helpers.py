"""Pure helpers of the app shell: prompt cleaning, token display, the pipeline diagram (SVG)."""

from __future__ import annotations

import pytest

from core.engine.prompt import MAX_PROMPT_CHARS, PromptProblem, clean_prompt
import html
import re
import xml.etree.ElementTree as ET

from ui.diagram import PipelineValues, pipeline_svg, svg_escape, text_width
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


def test_svg_escape_leaves_no_sign_markup_could_read() -> None:
    assert svg_escape('a<b> "c" *d* $e$') == "a&#60;b&#62; &#34;c&#34; &#42;d&#42; &#36;e&#36;"
    assert svg_escape("法国 → ␣Paris 12") == "法国 → ␣Paris 12"  # letters, digits, spaces, non-ASCII stay


def _values(text: str) -> PipelineValues:
    return PipelineValues(text=text, tokens=["法国", "的"], ids=[5, 6], n_layer=4, n_head=4,
                          d_model=128, d_mlp=512, vocab_size=3000, positional="sinusoidal",
                          norm="layernorm", mlp="gelu", top_token="巴黎", top_prob=0.93)


SVG = "{http://www.w3.org/2000/svg}"


def _rows(text: ET.Element) -> list[str]:
    """The lines one ``<text>`` shows: a box's rows are its ``<tspan>``s (the spaces between them
    are for screen readers), any other text is one line."""
    spans = text.findall(SVG + "tspan")
    return [span.text for span in spans if span.text.strip()] if spans else ["".join(text.itertext())]


def _texts(svg: str) -> list[str]:
    """Every line the drawing shows (box rows, column titles, lane labels), as a browser draws it."""
    root = ET.fromstring(svg)  # well-formed XML, or this fails
    return [row for el in root.iter(SVG + "text") for row in _rows(el)]


def _boxes(svg: str) -> dict[str, tuple[str, str]]:
    """Linked boxes: data-page -> (href, fill)."""
    root = ET.fromstring(svg)
    return {a.get("data-page"): (a.get("href"), a.find(SVG + "rect").get("fill")) for a in root.iter(SVG + "a")}


def test_pipeline_svg_has_every_stage_and_live_values() -> None:
    labels = _labels()
    svg = pipeline_svg(_values("法国的"), labels, {"tokenization": "tokenization"})
    texts = _texts(svg)
    for key in labels:
        if key not in ("add_rope", "block"):
            assert labels[key] in texts, key
    assert "BLOCK × 4" in texts  # the block column's title says how many layers
    assert "top: 巴黎  p=0.93" in texts and "→ 巴黎" in texts
    assert "2 × 128" in texts and "2 × 128  (vocab 3000)" in texts
    assert "[法国, 的]" in texts and "[5, 6]" in texts
    # Only pages that exist are links (both tokenizer boxes); the rest are plain boxes.
    root = ET.fromstring(svg)
    links = [a.get("href") for a in root.iter(SVG + "a")]
    assert links == ["./tokenization", "./tokenization"]


def test_pipeline_svg_cannot_be_broken_by_user_text() -> None:
    # HTML, SVG, Markdown, LaTeX and Streamlit's emoji/colour codes: all must stay plain text.
    hostile = '"><script>alert(1)</script><a href="x">*b* _i_ `c` [l](u) $x^2$ :smile: :red[r] \\ &amp;'
    svg = pipeline_svg(_values(hostile), _labels(), {"tokenization": "tokenization?prompt=%3Cb%3E&lang=zh"})
    texts = _texts(svg)
    assert hostile[:39] + "…" in texts  # shown (shortened) exactly as typed
    root = ET.fromstring(svg)
    assert not list(root.iter("script")) and not list(root.iter(SVG + "script"))
    assert [a.get("href") for a in root.iter(SVG + "a")][0] == "./tokenization?prompt=%3Cb%3E&lang=zh"
    # Between the tags no Markdown or LaTeX sign is left as itself (Streamlit's Markdown reads it).
    between = " ".join(re.findall(r">([^<]*)<", svg))
    for sign in "*_`[]$:\\<>\"'":
        assert sign not in between, sign


def _labels() -> dict[str, str]:
    return {k: k.upper() for k in ("text", "tokenizer", "ids", "embed", "pos", "add", "block", "ln1",
                                   "attn", "resid1", "ln2", "mlp", "resid2", "ln_final", "lm_head",
                                   "logits", "softmax", "sample", "append", "add_rope")}


def _dashed_titles(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [g.find(SVG + "title").text for g in root.iter(SVG + "g")
            if g.find(SVG + "path") is not None and g.find(SVG + "path").get("stroke-dasharray")]


def _arrows(svg: str) -> int:
    return sum(1 for _ in ET.fromstring(svg).iter(SVG + "path"))


def test_rope_overview_rotates_q_k_and_adds_nothing() -> None:
    import dataclasses

    rope = dataclasses.replace(_values("法国的"), positional="rope", norm="rmsnorm", mlp="swiglu")
    svg = pipeline_svg(rope, _labels(), {})
    texts = _texts(svg)
    assert "RoPE: rotates q, k in attention" in texts and "ADD_ROPE" in texts and "2 × 128  (nothing added)" in texts
    assert _dashed_titles(svg) == ["residual", "rotates q, k", "residual"]
    learned = pipeline_svg(_values("法国的"), _labels(), {})
    assert _dashed_titles(learned) == ["residual", "residual"] and "ADD_ROPE" not in _texts(learned)
    # Learned: 14 arrows down the columns (embed -> pos is none), embed -> add, 2 across, 2 residual.
    # RoPE: position -> sum is gone, position -> attention is there.
    assert _arrows(learned) == 19 and _arrows(svg) == 19


def test_pipeline_svg_translates_small_words_and_kinds() -> None:
    words = {"heads": "个头", "vocab": "词表", "residual": "残差", "top": "最高"}
    kinds = {"sinusoidal": "正弦位置编码", "layernorm": "层归一化", "gelu": "GELU 激活"}
    svg = pipeline_svg(_values("法国的"), _labels(), {}, words=words, kinds=kinds, font_size=17)
    texts = " ".join(_texts(svg))
    for english in ("heads", "vocab", "residual", "top:", "sinusoidal", "layernorm", "gelu"):
        assert english not in texts and english not in svg.split(">", 1)[1], english
    assert "4 个头" in texts and "正弦位置编码: 2 × 128" in texts and texts.count("残差") == 2
    assert 'font-size="17"' in svg


def test_pipeline_svg_boxes_are_wide_enough_for_their_text() -> None:
    # The browser's fonts are unknown here: each box is sized from a generous estimate, which
    # must hold for the widest line in the box (Chinese counts one em per character).
    svg = pipeline_svg(_values("一二三四五六七八九十一二三四五六七八九十一二三四五六七八九十"), _labels(), {})
    root = ET.fromstring(svg)
    for group in [*root.iter(SVG + "a"), *root.iter(SVG + "g")]:
        rect = group.find(SVG + "rect")
        if rect is None:
            continue
        for text in group.findall(SVG + "text"):
            size = float(text.get("font-size"))
            for row in _rows(text):
                assert text_width(row, size) <= float(rect.get("width")), row
    assert text_width("一二", 10) == 20 and text_width("ab", 10) == 12.4


def test_pipeline_svg_keeps_a_smallest_width() -> None:
    svg = pipeline_svg(_values("法国的"), _labels(), {}, min_scale=0.75)
    view_w = float(ET.fromstring(svg).get("viewBox").split()[2])
    style = dict(part.split(": ") for part in ET.fromstring(svg).get("style").rstrip(";").split("; "))
    assert style["max-width"] == f"{view_w:.0f}px" and style["min-width"] == f"{view_w * 0.75:.0f}px"

"""The app shell: the overview renders in both languages, state survives page changes."""

from __future__ import annotations

from tests.app.conftest import assert_clean, open_page, overview_svg, overview_svg_texts
from ui import nav
from ui.i18n import translate


def test_overview_renders(lang: str) -> None:
    at = open_page(None, lang=lang)
    assert_clean(at)
    overview_svg(at)
    expected = "Token Journey" if lang == "en" else "Token 之旅"
    assert expected in at.title[0].value


def test_sidebar_widgets_exist() -> None:
    at = open_page(None)
    in_sidebar = {getattr(w, "key", None) for w in _sidebar_widgets(at)}
    for key in ("w_lang", "w_preset_en", "w_prompt", "w_model", "w_seed"):
        assert key in in_sidebar, (key, sorted(k for k in in_sidebar if k))


def _sidebar_widgets(at):
    return [*at.sidebar.selectbox, *at.sidebar.text_area, *at.sidebar.number_input]


def test_overview_diagram_shows_the_live_prompt() -> None:
    at = open_page(None, prompt="The capital of Japan is")
    texts = overview_svg_texts(at)
    assert "The capital of Japan is" in texts
    assert any(text.startswith("top: ") for text in texts)


def test_language_and_prompt_survive_a_page_change() -> None:
    at = open_page(None, lang="en")
    at.selectbox(key="w_lang").set_value("zh").run()
    at.text_area(key="w_prompt").set_value("日本的首都是").run()
    assert at.session_state["lang"] == "zh"
    existing = [p for _, ps in nav.existing_sections() for p in ps if p.path != "app.py"]
    assert existing, "no page besides the Overview to change to"
    at.switch_page(existing[0].path).run()
    assert_clean(at)
    assert translate(f"{existing[0].page_id}.title", "zh") in at.title[0].value  # the switch happened, in 中文
    assert at.session_state["lang"] == "zh"
    assert at.session_state["prompt"] == "日本的首都是"
    assert at.text_area(key="w_prompt").value == "日本的首都是"
    assert at.selectbox(key="w_lang").value == "zh"


def test_preset_sets_the_prompt() -> None:
    at = open_page(None)
    at.selectbox(key="w_preset_en").set_value("capital_zh").run()
    assert at.session_state["prompt"] == "法国的首都是"
    assert_clean(at)


def test_bad_prompts_get_a_message_not_a_crash(lang: str) -> None:
    for bad in ("", "\x00\x01\x02", "x" * 5000):
        at = open_page(None, lang=lang, prompt=bad)
        assert not at.exception
        assert at.warning, f"no message for {bad[:10]!r}"


def test_html_in_the_prompt_is_not_rendered_as_html() -> None:
    at = open_page(None, prompt="<b>bold</b><script>alert(1)</script>")
    assert_clean(at)
    svg = overview_svg(at)
    assert "<b>" not in svg and "<script>" not in svg  # the prompt is never markup…
    assert "<b>bold</b><script>alert(1)</script>" in overview_svg_texts(at)  # …but shown as typed


def test_every_existing_page_renders_in_both_languages(lang: str) -> None:
    declared = [page for _, pages in nav.SECTIONS for page in pages if page.path != "app.py"]
    assert len(declared) >= 10, [p.page_id for p in declared]
    assert [p for _, ps in nav.existing_sections() for p in ps if p.path != "app.py"] == declared  # none missing
    for page in declared:
        at = open_page(page.path.removeprefix("pages/").removesuffix(".py"), lang=lang)
        assert_clean(at)
        assert translate(f"{page.page_id}.title", lang) in at.title[0].value, page.page_id

"""AppTest: the Embeddings page renders in both languages, shows the seeds' numbers, reacts."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP, assert_clean, chart_title, open_page, spaces
from ui import state
from ui.i18n import load_strings

PAGE = "embeddings"
SEED_NUMBERS = {"0.99", "0.34", "0.14", "1.16"}


def open_embeddings(lang: str = "en", model: str = "classic") -> AppTest:
    """Start from app.py with the durable language and model set, then switch to the page."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["lang"] = lang
    at.session_state["model"] = model
    at.run()
    at.switch_page(f"pages/{PAGE}.py")
    at.run()
    return at


def table_with(at: AppTest, column: str):
    """The first data frame or static table with this column (a table's index becomes its first column)."""
    frames = [f.value for f in at.dataframe] + [f.value.reset_index() for f in at.table]
    for frame in frames:
        if column in frame.columns:
            return frame
    raise AssertionError(f"no table with a column {column!r}: {[list(f.columns) for f in frames]}")


def the_map(at: AppTest) -> dict:
    return spaces(at)["embeddings_map_chart"]


def group_sizes(space: dict) -> dict[str, int]:
    """How many points each group of a 3-D space holds, by the group's (legend) name."""
    names = [g["name"] for g in space["groups"]]
    counts = dict.fromkeys(names, 0)
    for g in space["points"]["group"]:
        counts[names[g]] += 1
    return counts


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_renders_with_the_seed_numbers(lang: str) -> None:
    at = open_embeddings(lang)
    assert_clean(at)
    assert at.title[0].value == ("Embeddings: from token ids to vectors" if lang == "en" else "嵌入：从词元 ID 到向量")
    cosine = "cosine similarity" if lang == "en" else "余弦相似度"
    distance = "Euclidean distance" if lang == "en" else "欧氏距离"
    lab = table_with(at, "pair" if lang == "en" else "词对")
    pairs = list(lab.iloc[:, 0])
    apple, banana, plane = ("apple", "banana", "plane") if lang == "en" else ("苹果", "香蕉", "飞机")
    assert pairs[:2] == [f"{apple} – {banana}", f"{apple} – {plane}"]
    assert list(lab[cosine][:2]) == ["0.99", "0.34"]
    assert list(lab[distance][:2]) == ["0.14", "1.16"]
    # The hand calculation, as in the seeds: 0.63 / (0.831 × 0.768).
    work = next(m.value for m in at.markdown if "0.630" in m.value)
    assert "0.831" in work and "0.768" in work and "**0.99**" in work and "**0.14**" in work


def test_chinese_page_reacts_to_its_widgets() -> None:
    at = open_embeddings("zh")
    at.toggle(key="embeddings_lab_normalise").set_value(True).run()
    at.session_state[state.durable_key("embeddings_map_fit_categories")] = True  # as a link sets it
    at.run()
    assert_clean(at)
    views = the_map(at)["views"]
    assert views["knobs"]["fit"]["value"] == 1  # the browser starts from the linked fit
    zh = load_strings("zh")
    assert [f["label"] for f in views["fits"]] == [zh["embeddings.map.fit.all"], zh["embeddings.map.fit.categories"]]
    assert views["only_label"] == load_strings("zh")["embeddings.map.only_categories"]
    lab = table_with(at, "词对")
    assert list(lab["欧氏距离"]) == list(lab["√(2 − 2·cos)"])
    assert at.text_input(key="embeddings_context_a").value == "法国的首都是"


def test_key_widgets_exist() -> None:
    at = open_embeddings()
    assert at.toggle(key="embeddings_lab_normalise").value is False
    views = the_map(at)["views"]  # the map's display toggles are the browser's (ui/components/space3d)
    assert views["knobs"]["only"] == {"name": "embeddings_map_only", "value": 0, "default": 0}
    assert views["knobs"]["fit"] == {"name": "embeddings_map_fit_categories", "value": 0, "default": 0}
    for key in ("embeddings_nn_token", "embeddings_analogy_a", "embeddings_analogy_b", "embeddings_analogy_c",
                "embeddings_context_preset", "embeddings_lab_work_pair"):
        at.selectbox(key=key)
    at.slider(key="embeddings_nn_k")
    for key in ("embeddings_context_a", "embeddings_context_b", "embeddings_context_word"):
        at.text_input(key=key)


def test_lookup_table_shows_the_prompts_ids_and_rows() -> None:
    at = open_embeddings()
    ids = table_with(at, "id")
    assert list(ids["token"]) == ["The", "␣capital", "␣of", "␣France", "␣is"]
    [heat] = [e for e in at.get("vega_lite_chart") if chart_title(json.loads(e.proto.spec)).startswith("Your prompt's")]
    cells = convert_arrow_bytes_to_pandas_df(heat.proto.datasets[0].data.data)
    rows = list(dict.fromkeys(cells.iloc[:, 0]))  # the row labels, top to bottom
    assert rows == ["0·The", "1·␣capital", "2·␣of", "3·␣France", "4·␣is"]
    import core
    from ui.precompute import embeddings_table

    loaded = core.load_builtin("classic")
    table = np.asarray(embeddings_table(loaded).matrix)
    ids = loaded.tokenizer.encode("The capital of France is")
    assert len(cells) == len(ids) * table.shape[1]
    shown = cells.iloc[:, 2].to_numpy(dtype=float).reshape(len(ids), table.shape[1])
    np.testing.assert_allclose(shown, table[ids], rtol=1e-6, atol=1e-7)  # the table's own rows
    metric = next(m for m in at.metric if "vocab" in m.label)
    assert "×" in metric.value


def test_normalise_makes_distance_follow_the_cosine() -> None:
    at = open_embeddings()
    before = table_with(at, "pair")
    at.toggle(key="embeddings_lab_normalise").set_value(True).run()
    after = table_with(at, "pair")
    assert list(after["cosine similarity"]) == list(before["cosine similarity"])  # directions unchanged
    assert list(after["Euclidean distance"]) != list(before["Euclidean distance"])
    assert list(after["Euclidean distance"]) == list(after["√(2 − 2·cos)"])
    # apple–banana on the unit sphere: √(2 − 2 × 0.98739) ≈ 0.159
    assert after["Euclidean distance"].iloc[0] == "0.16"


def test_map_holds_every_token_the_model_trained_on() -> None:
    """The built-in model's map draws the tokens of its training text (and the prompt's), not
    the common Han characters the tokenizer knows but training never used."""
    import core

    at = open_embeddings()
    space = the_map(at)
    shape = next(m for m in at.metric if "vocab" in m.label).value
    vocab_size = int(shape.split("×")[0].replace(",", ""))
    loaded = core.load_builtin("classic")
    trained = set(loaded.metrics["trained_token_ids"])
    vocab = len(trained)  # the default prompt's tokens and the category words are all among them
    assert 500 < vocab < vocab_size
    sizes = group_sizes(space)
    assert space["groups"][-1]["name"] == "your prompt" and space["groups"][-1]["ring"]
    assert sizes["your prompt"] == 5
    assert sum(sizes.values()) - 5 == vocab
    ids = space["points"]["id"]
    assert set(ids[:-5]) == trained and ids[-5:] == loaded.tokenizer.encode("The capital of France is")
    assert any(f"{vocab_size - len(trained):,}" in c.value for c in at.caption)  # says how many are left out
    assert "other" in sizes and "fruit" in sizes and "capital city" in sizes
    # Each point sits at its token's PCA coordinates (to 4 significant digits) and is labelled by it.
    from ui.precompute import embeddings_table

    view = embeddings_table(loaded)
    sent = np.array([space["points"][c] for c in "xyz"]).T
    np.testing.assert_allclose(sent, view.projection.coords[ids], rtol=6e-4, atol=1e-6)
    assert space["points"]["label"][:3] == [view.labels[i] for i in ids[:3]]
    # Directions fitted to the category words: the same tokens (sent once, in the same order),
    # other coordinates and axes; the browser switches between the two fits.
    fits = {f["key"]: f for f in space["views"]["fits"]}  # 0: all tokens, 1: the category words
    assert fits[0]["axes"] == space["axes"] and space["axes"][0].startswith("PC1")
    assert fits[1]["axes"][0] != space["axes"][0]
    np.testing.assert_allclose(np.array([fits[1][c] for c in "xyz"]).T,
                               view.projection_categories.coords[ids], rtol=6e-4, atol=1e-6)
    assert "Explained variance" in fits[0]["caption"] and "category words" in fits[1]["caption"]
    # Only categories: the browser hides the grey "other" group, the one named here.
    other = space["views"]["other_group"]
    assert space["groups"][other]["name"] == "other" and not space["groups"][other]["ring"]


def test_analogy_defaults_to_capital_minus_country_plus_country() -> None:
    at = open_embeddings()
    labels = [at.selectbox(key=f"embeddings_analogy_{x}").format_func(at.selectbox(key=f"embeddings_analogy_{x}").value)
              for x in "abc"]
    assert [label.split("·")[0].strip() for label in labels] == ["␣Paris", "␣France", "␣Russia"]
    assert any("Nearest tokens to ␣Paris − ␣France + ␣Russia" in chart_title(json.loads(c.proto.spec))
               for c in at.get("vega_lite_chart"))
    # The corpus world knows the answer, so the page says where Moscow landed (first, on both models).
    assert any(c.value.startswith("The world's answer, ␣Moscow, is number 1 ") for c in at.caption)


@pytest.mark.parametrize("model", ["classic", "modern"])
@pytest.mark.parametrize(("lang", "answer"), [("en", "The world's answer, ␣Moscow, is number 1 "),
                                              ("zh", "语料世界里的正确答案 马德里 排在这 8 个中的第 1 位")])
def test_the_default_analogy_lands_on_the_right_capital_first(lang: str, answer: str, model: str) -> None:
    """The default example works on both built-in models in both languages: Paris − France + Russia
    gives Moscow and 北京 − 中国 + 西班牙 gives 马德里 as the nearest token."""
    at = open_embeddings(lang, model)
    assert not at.exception
    assert any(c.value.startswith(answer) for c in at.caption), [c.value for c in at.caption]


def test_neighbour_choice_changes_the_chart() -> None:
    at = open_embeddings()

    def neighbour_chart() -> str:
        return next(c.proto.spec for c in at.get("vega_lite_chart") if "Nearest neighbours of" in c.proto.spec)

    before = neighbour_chart()
    box = at.selectbox(key="embeddings_nn_token")
    import core

    trained = core.load_builtin("classic").metrics["trained_token_ids"]  # the built-in model's picker offers these
    box.set_value(next(i for i in trained if i > box.value)).run()  # the next token id on offer
    assert neighbour_chart() != before


def test_contextual_similarity_uses_the_models_residual_stream() -> None:
    at = open_embeddings()
    table = table_with(at, "trace name")
    assert list(table["trace name"][:3]) == ["hook_embed", "blocks.0.hook_resid_pre", "blocks.0.hook_resid_mid"]
    cosines = [float(c) for c in table["cosine similarity"]]
    assert cosines[0] == pytest.approx(1.0) and cosines[1] == pytest.approx(1.0)  # same row, same position
    assert cosines[-1] < 0.9  # attention has mixed in France vs Japan
    # The coreference example: "sweet" vs "small" before the pronoun also moves it.
    at.selectbox(key="embeddings_context_preset").set_value("coref").run()
    coref = [float(c) for c in table_with(at, "trace name")["cosine similarity"]]
    assert coref[0] == pytest.approx(1.0) and coref[-1] < 0.9999
    # Change only what comes AFTER the word: a causal model keeps it identical everywhere.
    at.text_input(key="embeddings_context_a").set_value("Tom put the apple in the bag because it was too small. It is")
    at.text_input(key="embeddings_context_b").set_value("Tom put the apple in the bag because it was too small. It was")
    at.text_input(key="embeddings_context_word").set_value("It")
    at.run()
    same = [float(c) for c in table_with(at, "trace name")["cosine similarity"]]
    assert same == pytest.approx([1.0] * len(same), abs=1e-5)


def test_missing_word_gets_a_message_not_a_crash() -> None:
    at = open_embeddings()
    at.text_input(key="embeddings_context_word").set_value("zebra").run()
    assert not at.exception
    assert any("zebra" in w.value for w in at.warning)


def test_bad_prompt_is_refused_politely() -> None:
    at = open_page(PAGE, lang="en", prompt="   ")
    assert not at.exception
    assert at.warning


def test_modern_model_renders() -> None:
    at = open_embeddings(model="modern")
    assert_clean(at)
    cosines = [float(c) for c in table_with(at, "trace name")["cosine similarity"]]
    assert cosines[0] == pytest.approx(1.0) and cosines[-1] < 0.9


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_map_categories_are_legend_entries_toggled_in_the_browser(lang: str) -> None:
    """[W2-F] 6: no server-side category filter; every category is its own legend entry, so a
    click in the legend hides or shows it without a rerun."""
    from ui.i18n import translate

    at = open_embeddings(lang)
    assert_clean(at)
    assert not [w for w in at.multiselect if w.key == "embeddings_map_categories"]
    names = [g["name"] for g in the_map(at)["groups"] if g["legend"]]
    expected = {translate(f"embeddings.category.{key}", lang) for key in ("fruit", "animal", "country", "city")}
    assert expected <= set(names), names
    assert translate("embeddings.map.other", lang) in names  # the uncategorised tokens: one more entry
    assert len(names) == len(set(names))  # one entry per group
    assert any(translate("embeddings.map.legend_hint", lang) in c.value for c in at.caption)

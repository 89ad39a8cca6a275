"""Embeddings sections: from token ids to vectors, and what the geometry of those vectors means.

Four sections: the lookup table (the prompt's rows of the embedding matrix), a similarity
lab on hand-editable vectors (the seeds' 苹果 / 香蕉 / 飞机), the model's whole table in 3-D
(PCA, coloured by the corpus' categories) with neighbours and analogies, and contextual
embeddings (one word's residual-stream vector in two prompts, layer by layer).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

import ui.charts.common as draw

from core.lessons import vectors
from core.engine.prompt import PromptProblem
from ui.charts.common import bar_chart
from ui.charts.space3d import arrows_space, embedding_space, joined_space, prompt_ring
from ui.charts.vectors import MapText, distance_vs_cosine, matrix_chart, similarity_by_stage
from ui.components import space3d
from ui.i18n import load_strings, t
from ui import state
from ui.page import Page
from ui.precompute import EMBEDDINGS_TABLE, TableView, embeddings_table
from ui.resources import get_model, is_foreign, memo, run_prompt, shared
from ui.text import escape_markdown
from ui.tokens import display_token

LAB_DIMS = 3  # the seeds' toy vectors have three numbers; three also draws as arrows in 3-D
LAB_LIMIT = 1e6  # an edited number beyond this is refused (it would only flatten the arrows)
CATEGORY_ORDER = ("country", "city", "person", "fruit", "food", "animal", "vehicle", "container", "colour", "place")
CONTEXT_PRESETS = state.EMBEDDINGS_CONTEXT_PRESETS  # the capital pair diverges most clearly in our small model


# --- cached, per model ---------------------------------------------------------------------


def table_view(model_name: str) -> TableView:
    """PCA of the full table, computed once per model at its load and shared by every session (read-only)."""
    return shared(model_name, EMBEDDINGS_TABLE) or shared(model_name, EMBEDDINGS_TABLE + ".on_demand", embeddings_table)


@st.cache_resource(show_spinner=False)
def capitals() -> dict[str, str]:
    """Country → capital from the corpus world, English and Chinese words alike (read-only)."""
    from core.text.corpus import load_world

    pairs: dict[str, str] = {}
    for country in load_world().countries:
        pairs[country.name.en] = country.capital.en
        pairs[country.name.zh] = country.capital.zh
    return pairs


def cosine_index(model_name: str) -> vectors.CosineIndex:
    """Unit-length embedding rows, made once per model (a 150k-token table is not re-normalised per question)."""
    return shared(model_name, "embeddings.cosine_index", lambda _loaded: vectors.CosineIndex(table_view(model_name).matrix))


@memo(maxsize=256)
def neighbours(model_name: str, token_id: int, k: int) -> list[vectors.Neighbour]:
    return cosine_index(model_name).neighbours_of_token(token_id, k=k)


@memo(maxsize=256)
def analogy(model_name: str, a: int, b: int, c: int, k: int) -> list[vectors.Neighbour]:
    return cosine_index(model_name).analogy(a, b, c, k=k)


# --- small formatting helpers --------------------------------------------------------------


md_escape = escape_markdown  # user text inside Markdown (ui.text: the one escaping helper)


def category_name(key: str) -> str:
    label = f"embeddings.category.{key}"
    return t(label) if label in load_strings("en") else key


def category_names(view: TableView) -> dict[str, str]:
    """Categories present in the vocabulary, in a fixed teaching order, with translated names."""
    found = set(view.categories)  # once: ~6k entries (it was built again for every category)
    present = [c for c in CATEGORY_ORDER if c in found]
    present += sorted({c for c in found if c is not None} - set(present))
    return {key: category_name(key) for key in present}


MAX_TOKEN_OPTIONS = 5000  # a 150k-token vocabulary in one select box would send megabytes per rerun


def _token_choices(view: TableView, must: list[int]) -> list[int] | range:
    if view.trained:  # built-in model: the tokens it saw in training
        return sorted({*view.trained, *must})
    if len(view.labels) <= MAX_TOKEN_OPTIONS:
        return range(len(view.labels))
    words = [i for i, c in enumerate(view.categories) if c is not None]
    return vectors.map_sample(len(view.labels), [*must, *words], limit=MAX_TOKEN_OPTIONS) or range(len(view.labels))


@memo(maxsize=64)
def _choices_for(model_name: str, must: tuple[int, ...]) -> list[int] | range:
    return _token_choices(table_view(model_name), list(must))


def token_choices(model_name: str, must: list[int]) -> list[int] | range:
    """Token ids a picker offers: all of a small vocabulary; else a fixed sample, the category
    words and ``must`` (the prompt's tokens, the defaults). Shared per (model, ``must``)."""
    return _choices_for(model_name, tuple(int(i) for i in must))


def token_option(model_name: str):
    """The pickers' label of every token id ("Paris  · #812"), made once per model and shared."""
    def compute(_loaded) -> list[str]:
        return [f"{label}  · #{i}" for i, label in enumerate(table_view(model_name).labels)]

    return shared(model_name, "embeddings.option_labels", compute).__getitem__


def default_token(model_name: str, view: TableView, word_key: str, fallback: int) -> int:
    found = find_token(model_name, view, t(word_key))
    return found if found is not None else fallback


def find_token(model_name: str, view: TableView, word: str) -> int | None:
    """``vectors.find_token_id`` with the model's spelling index made once and shared."""
    index = shared(model_name, "embeddings.spelling_index", lambda _loaded: vectors.spelling_index(view.vocab))
    return vectors.find_token_id(view.vocab, word, index=index)


# --- 1. lookup table ------------------------------------------------------------------------


def lookup_section(page: Page) -> None:
    """The prompt's rows of the embedding matrix: the table's shape, its ids, its numbers."""
    run, cfg = page.run, page.config
    st.header(t("embeddings.lookup.header"))
    st.markdown(t("embeddings.lookup.explain"))
    params = cfg.vocab_size * cfg.d_model
    cols = st.columns(3)
    cols[0].metric(t("embeddings.lookup.shape"), f"{cfg.vocab_size:,} × {cfg.d_model}")
    cols[1].metric(t("embeddings.lookup.params"), f"{params:,}")
    cols[2].metric(t("embeddings.lookup.prompt_tokens"), len(run.ids))
    st.caption(t("embeddings.lookup.params_caption", vocab=f"{cfg.vocab_size:,}", d=cfg.d_model, params=f"{params:,}")
               + (" " + t("embeddings.lookup.tied") if cfg.tie_embeddings else ""))

    token_labels = [f"{i}·{display_token(tok)}" for i, tok in enumerate(run.tokens)]
    with st.spinner(t("embeddings.loading.table")):  # the first visit fits the PCA of the whole table
        embed_rows = table_view(page.model_name).matrix[run.ids]  # the table's own rows, exactly as stored
    left, right = st.columns([1, 3])
    with left:
        st.dataframe(
            pd.DataFrame({
                t("embeddings.lookup.col_pos"): range(len(run.ids)),
                t("embeddings.lookup.col_token"): [display_token(tok) for tok in run.tokens],
                t("embeddings.lookup.col_id"): run.ids,
            }),
            hide_index=True,
            width="stretch",
            key="embeddings_lookup_ids",
        )
    with right:
        matrix_chart(  # built once per (prompt, language, theme): shared by every session
            embed_rows, key="embeddings_lookup_heatmap",
            title=t("embeddings.lookup.heatmap_title", n=len(run.ids), d=cfg.d_model),
            x_title=t("embeddings.axis.dimension"), y_title=t("embeddings.axis.token"),
            value_title=t("embeddings.axis.value"), y_labels=token_labels,
            height=min(700, 170 + 30 * len(run.ids)),
        )
    st.caption(t("embeddings.lookup.caption"))
    if cfg.scale_embeddings:
        st.caption(t("embeddings.lookup.scaled", d=cfg.d_model, factor=f"{cfg.d_model ** 0.5:.1f}"))


# --- 2. similarity lab ----------------------------------------------------------------------


def lab_section(page: Page) -> None:
    """Hand-editable vectors (the seeds' 苹果 / 香蕉 / 飞机): cosine against distance."""
    st.header(t("embeddings.lab.header"))
    st.markdown(t("embeddings.lab.explain"))
    similarity_lab(page.lang)


@st.fragment
def similarity_lab(lang: str) -> None:
    """The editable table, the arrows in 3-D, every pair's measures and one pair worked by hand."""
    checked = _lab_vectors(lang)
    if checked is None:
        return
    names, raw, normalise = checked
    try:
        pairs = vectors.pairwise_measures(dict(zip(names, raw)), normalise=normalise)
        shown = {n: (vectors.l2_normalise(r) if normalise else r) for n, r in zip(names, raw)}
    except ValueError:  # nothing else is expected; say so in the page's language, without English detail
        st.warning(t("embeddings.lab.bad_vectors"))
        return
    _lab_charts(pairs, shown, normalise)
    st.markdown(t("embeddings.lab.unit_note" if normalise else "embeddings.lab.raw_note"))
    _lab_work(pairs, shown)


def _lab_vectors(lang: str) -> tuple[list[str], np.ndarray, bool] | None:
    """The edited vectors, checked and kept (names, rows, normalise?), or None after a warning."""
    word_col, dims = t("embeddings.lab.col_word"), [f"x{j + 1}" for j in range(LAB_DIMS)]
    # The table is a durable value (ui.state): edits survive a page change and travel in the link.
    rows = state.get("embeddings_lab_rows")
    start = pd.DataFrame([{word_col: row[0], **dict(zip(dims, row[1:]))} for row in rows])
    try:
        edited = _lab_editor(start, lang, word_col, dims)
    except (KeyError, IndexError, ValueError, TypeError):  # an edit to a column or row the table has not
        st.session_state.pop(f"embeddings_lab_vectors_{lang}", None)  # the next run draws the kept table
        st.warning(t("embeddings.lab.rows_fixed", rows=len(rows)))
        return None
    normalise = st.toggle(t("embeddings.lab.normalise"), **state.bind("embeddings_lab_normalise"),
                          help=t("embeddings.lab.normalise_help"))
    if len(edited) != len(rows) or list(edited.columns) != [word_col, *dims]:
        # The table is fixed (three rows, these columns): only a crafted message adds or deletes.
        st.warning(t("embeddings.lab.rows_fixed", rows=len(rows)))
        return None
    return _checked_lab_rows(edited, rows, word_col, dims, normalise)


def _lab_editor(start: pd.DataFrame, lang: str, word_col: str, dims: list[str]) -> pd.DataFrame:
    """The editable table (its cells bounded in the browser; every value is checked again after)."""
    return st.data_editor(
        start,
        key=f"embeddings_lab_vectors_{lang}",  # one table per language: the words differ
        hide_index=True,
        num_rows="fixed",
        width="stretch",
        column_config={
            word_col: st.column_config.TextColumn(word_col, max_chars=20, required=True),
            **{d: st.column_config.NumberColumn(d, min_value=-LAB_LIMIT, max_value=LAB_LIMIT, format="%.3f",
                                                required=True) for d in dims},
        },
    )


def _checked_lab_rows(edited: pd.DataFrame, rows: list[list[Any]], word_col: str, dims: list[str],
                      normalise: bool) -> tuple[list[str], np.ndarray, bool] | None:
    """The edited cells checked (a warning and None when one is missing, too large or all zero)."""
    names = [str(n).strip() if isinstance(n, str) and str(n).strip() else f"#{i + 1}"
             for i, n in enumerate(edited[word_col])]
    if len(set(names)) < len(names):  # the table keys vectors by name: keep each row distinct
        names = [f"{n} ({i + 1})" for i, n in enumerate(names)]
    try:  # the browser bounds the cells, but a crafted message can send anything: check here too
        raw = edited[dims].to_numpy(dtype=float)
    except (TypeError, ValueError):
        raw = np.full((len(names), LAB_DIMS), np.nan)
    if not np.isfinite(raw).all():
        st.warning(t("embeddings.lab.missing_value"))
        return None
    if np.abs(raw).max() > LAB_LIMIT:
        st.warning(t("embeddings.lab.too_large", limit=f"{LAB_LIMIT:,.0f}"))
        return None
    words = [n if isinstance(n, str) else "" for n in edited[word_col]]
    now = [[w[:20], *map(float, r)] for w, r in zip(words, raw)]
    if now != rows:  # keep the student's edits (checked) for the next visit and the link
        state.put("embeddings_lab_rows", now)
        state.sync_url()
    zero = [n for n, r in zip(names, raw) if not np.any(r)]
    if zero:
        st.warning(t("embeddings.lab.zero_vector", word=md_escape(zero[0])))
        return None
    return names, raw, normalise


def _lab_charts(pairs: list[vectors.PairMeasure], shown: dict[str, np.ndarray], normalise: bool) -> None:
    """The arrows in 3-D beside each pair's cosine and distance (a table and a scatter)."""
    left, right = st.columns([3, 2])
    with left:
        space3d.space3d(space3d.cached(arrows_space, (shown,), dict(
            title=t("embeddings.lab.arrows_title_unit" if normalise else "embeddings.lab.arrows_title"),
            axes=("x1", "x2", "x3"), space_labels=space3d.space_labels(),
        )), key="embeddings_lab_arrows")
    with right:
        pair_col = t("embeddings.lab.col_pair")
        cos_col, dist_col = t("embeddings.lab.col_cosine"), t("embeddings.lab.col_distance")
        table = pd.DataFrame({
            pair_col: [f"{p.first} – {p.second}" for p in pairs],
            cos_col: [f"{p.cosine:.2f}" for p in pairs],
            dist_col: [f"{p.distance:.2f}" for p in pairs],
        })
        if normalise:
            table[t("embeddings.lab.col_from_cosine")] = [
                f"{vectors.unit_distance_from_cosine(p.cosine):.2f}" for p in pairs]
        with st.container(key="embeddings_lab_table"):
            st.table(table.set_index(pair_col))  # a plain HTML table: three rows, always fully visible
        curve = None
        if normalise:
            grid = np.linspace(-1, 1, 81)
            curve = [(float(c), vectors.unit_distance_from_cosine(float(c))) for c in grid]
        draw.vega_cached(  # built once per input, shared: a rerun elsewhere costs a lookup
            distance_vs_cosine,
            ([(f"{p.first}–{p.second}", p.cosine, p.distance) for p in pairs], curve),
            dict(title=t("embeddings.lab.scatter_title"),
                 x_title=t("embeddings.lab.col_cosine"), y_title=t("embeddings.lab.col_distance"),
                 pair_title=pair_col, curve_label=t("embeddings.lab.curve")),
            width="stretch",
        )


def _lab_work(pairs: list[vectors.PairMeasure], shown: dict[str, np.ndarray]) -> None:
    """The seeds' hand calculation, for any pair the student picks."""
    pair_names = [f"{p.first} – {p.second}" for p in pairs]
    chosen = st.selectbox(t("embeddings.lab.work_pair"), range(len(pairs)), format_func=lambda i: pair_names[i],
                          key="embeddings_lab_work_pair")
    pair = pairs[chosen]
    a, b = shown[pair.first], shown[pair.second]
    work = vectors.show_work(a, b)
    fa, fb = md_escape(pair.first), md_escape(pair.second)
    products = " + ".join(f"{x:.3g}×{y:.3g}" for x, y in zip(a, b))
    diffs = " + ".join(f"({x:.3g}−{y:.3g})²" for x, y in zip(a, b))
    st.markdown(t(
        "embeddings.lab.work",
        a=fa, b=fb, products=products, dot=f"{work.dot:.3f}",
        norm_a=f"{work.norm_a:.3f}", norm_b=f"{work.norm_b:.3f}", cos=f"{work.cosine:.2f}",
        diffs=diffs, sq=f"{sum(work.squared_differences):.3f}", dist=f"{work.distance:.2f}",
    ))


# --- 3. the model's whole table in 3-D --------------------------------------------------------


def map_section(page: Page) -> None:
    """The whole table in 3-D, then nearest neighbours and analogies (each its own fragment:
    choosing a token reruns only that tool, not the map)."""
    cfg = page.config
    st.header(t("embeddings.map.header"))
    st.markdown(t("embeddings.map.explain", vocab=f"{cfg.vocab_size:,}", d=cfg.d_model))
    if is_foreign(page.model_name):  # a teacher's checkpoint never saw the textbook example's world
        st.info(t("foreign.tiny_world", name=page.model_name))
    semantic_map(page.model_name, list(page.run.ids), list(page.run.tokens))
    nearest(page.model_name, list(page.run.ids))
    analogies(page.model_name)


MAP_FITS = ("all", "categories")  # the fit knob's values 0 and 1


@st.fragment
def semantic_map(model_name: str, prompt_ids: list[int], prompt_tokens: list[str]) -> None:
    """The PCA map of the table, coloured by category, the prompt's tokens ringed.

    Both PCA fits and the grey "other" tokens are sent once; hiding the uncategorised tokens or
    switching the fit is answered in the browser (``space3d``'s views), with no round trip.
    """
    with st.spinner(t("embeddings.loading.table")):  # the first visit fits the PCA of the whole table
        view = table_view(model_name)
    names = category_names(view)
    # Showing or hiding a category is a click on its legend entry: the browser redraws the map
    # without a round trip (a server-side filter cost a rerun and a redraw of 1,837 points).
    st.caption(t("embeddings.map.legend_hint"))
    words = [i for i, c in enumerate(view.categories) if c]
    if view.trained:  # built-in model: the tokens it saw in training (about 1k of ~5.9k), not untrained Han rows
        shown = sorted({*view.trained, *prompt_ids})  # an untrained category word's row is noise: left out
    else:
        shown = vectors.map_sample(len(view.labels), [*prompt_ids, *words])
    text = MapText(
        title=t("embeddings.map.title_trained", shown=f"{len(shown):,}", vocab=f"{len(view.labels):,}")
        if view.trained else t("embeddings.map.title", vocab=f"{len(view.labels):,}"),
        axis=t("embeddings.map.axis"),
        token=t("embeddings.axis.token"), token_id=t("embeddings.lookup.col_id"),
        category=t("embeddings.map.category"), other=t("embeddings.map.other"),
        prompt=t("embeddings.map.prompt"),
    )
    spaces = {fit: _map_space(view, fit, names, text, shown, prompt_ids, prompt_tokens) for fit in MAP_FITS}
    base = spaces["all"]
    other = next((i for i, g in enumerate(base["groups"]) if g["name"] == text.other and not g["ring"]), -1)
    fit_labels = {k: t(f"embeddings.map.fit.{k}") for k in MAP_FITS}
    views = {  # flags travel as 0 / 1, as the link writes them (ui.state.flag)
        "knobs": {"only": {"name": "embeddings_map_only", "value": int(state.get("embeddings_map_only")),
                           "default": 0},
                  "fit": {"name": "embeddings_map_fit_categories",
                          "value": int(state.get("embeddings_map_fit_categories")), "default": 0}},
        "only_label": t("embeddings.map.only_categories"), "fit_label": t("embeddings.map.fit"),
        "fit_help": t("embeddings.map.fit_help"), "other_group": other,
        "fits": [{"key": MAP_FITS.index(fit), "label": fit_labels[fit], "axes": space["axes"],
                  **{c: space["points"][c] for c in "xyz"}, "caption": _variance_caption(view, fit)}
                 for fit, space in spaces.items()],
    }
    space3d.space3d(base, key="embeddings_map_chart", views=views)
    if view.trained:
        st.caption(t("embeddings.map.trained_only", shown=f"{len(shown):,}", vocab=f"{len(view.labels):,}",
                     unseen=f"{len(view.labels) - len(view.trained):,}"))
    elif shown is not None:  # a real vocabulary: a fixed sample plus the prompt's tokens
        st.caption(t("foreign.pca_sample", vocab=f"{len(view.labels):,}", sample=f"{len(shown):,}"))
    coloured = sum(1 for c in view.categories if c is not None)
    st.caption(t("embeddings.map.coloured", n=coloured, vocab=f"{len(view.labels):,}"))


def _map_space(view: TableView, fit: str, names: dict[str, str], text: MapText, shown: list[int] | None,
               prompt_ids: list[int], prompt_tokens: list[str]) -> dict:
    """One PCA fit's map with the prompt ringed. About 1k points, built once per (model, fit,
    language) and shared by every prompt; the ringed tokens are a small part joined per rerun."""
    projection = view.projection if fit == "all" else view.projection_categories
    map_args = (projection.coords, view.labels, view.categories, names, projection.explained_variance_ratio)
    points = space3d.cached(embedding_space, map_args, dict(
        text=text, show_other=True, shown_ids=shown, space_labels=space3d.space_labels()))
    ring = space3d.cached(prompt_ring, (projection.coords, prompt_ids,
                                        [display_token(tok) for tok in prompt_tokens]), dict(name=text.prompt))
    return joined_space(points, ring)


def _variance_caption(view: TableView, fit: str) -> str:
    """How much of the table's spread the fit's three directions hold (plain text: the browser shows it)."""
    ratio = (view.projection if fit == "all" else view.projection_categories).explained_variance_ratio
    key = "embeddings.map.variance" if fit == "all" else "embeddings.map.variance_categories"
    return t(key, pc1=f"{100 * ratio[0]:.1f}%", pc2=f"{100 * ratio[1]:.1f}%", pc3=f"{100 * ratio[2]:.1f}%",
             total=f"{100 * ratio.sum():.1f}%", d=view.matrix.shape[1])


@st.fragment
def nearest(model_name: str, prompt_ids: list[int]) -> None:
    """Nearest neighbours of one token."""
    with st.spinner(t("embeddings.loading.table")):  # the first visit fits the PCA of the whole table
        view = table_view(model_name)
    names = category_names(view)
    st.subheader(t("embeddings.nn.header"))
    fmt = token_option(model_name)
    first_with_category = next((i for i in prompt_ids if view.categories[i] is not None), prompt_ids[-1])
    left, right = st.columns([1, 2])
    with left:
        choices = token_choices(model_name, prompt_ids)
        token_id = st.selectbox(t("embeddings.nn.token"), choices, index=choices.index(first_with_category),
                                format_func=fmt, key="embeddings_nn_token")
        k = st.slider(t("embeddings.nn.k"), min_value=3, max_value=30, **state.bind("embeddings_nn_k"))
        own = view.categories[token_id]
        st.caption(t("embeddings.nn.category", category=names.get(own, t("embeddings.map.other")) if own
                     else t("embeddings.map.other")))
    found = neighbours(model_name, int(token_id), int(k))
    with right:
        draw.vega_cached(
            bar_chart, ([fmt(n.token_id) for n in found], [n.cosine for n in found]),
            dict(title=t("embeddings.nn.title", token=view.labels[token_id], k=k),
                 x_title=t("embeddings.lab.col_cosine"), y_title=t("embeddings.axis.token")),
            width="stretch",
        )



@st.fragment
def analogies(model_name: str) -> None:
    """Analogy arithmetic a − b + c."""
    with st.spinner(t("embeddings.loading.table")):  # the first visit fits the PCA of the whole table
        view = table_view(model_name)
    fmt = token_option(model_name)
    st.subheader(t("embeddings.analogy.header"))
    st.markdown(t("embeddings.analogy.explain"))
    defaults = [default_token(model_name, view, f"embeddings.analogy.default_{x}", fallback) for x, fallback in
                (("a", 1), ("b", 2), ("c", 3))]
    picks = st.columns(3)
    choices = token_choices(model_name, defaults)
    a = picks[0].selectbox("a", choices, index=choices.index(defaults[0]), format_func=fmt, key="embeddings_analogy_a")
    b = picks[1].selectbox("b", choices, index=choices.index(defaults[1]), format_func=fmt, key="embeddings_analogy_b")
    c = picks[2].selectbox("c", choices, index=choices.index(defaults[2]), format_func=fmt, key="embeddings_analogy_c")
    try:
        result = analogy(model_name, int(a), int(b), int(c), 8)
    except ValueError:
        st.warning(t("embeddings.analogy.bad"))
        return
    expression = f"{view.labels[a]} − {view.labels[b]} + {view.labels[c]}"
    draw.vega_cached(
        bar_chart, ([fmt(n.token_id) for n in result], [n.cosine for n in result]),
        dict(title=t("embeddings.analogy.title", expression=expression),
             x_title=t("embeddings.lab.col_cosine"), y_title=t("embeddings.axis.token")),
        width="stretch",
    )
    st.caption(t("embeddings.analogy.caption", best=view.labels[result[0].token_id]))
    # When a is b's capital and c is a country, the world knows the right answer: say where it landed.
    world = capitals()
    word_a, word_b, word_c = (view.vocab[i].strip() for i in (a, b, c))
    if world.get(word_b) == word_a and word_c in world:
        expected = find_token(model_name, view, world[word_c])
        found = [n.token_id for n in result]
        if expected is not None and expected in found:
            st.caption(t("embeddings.analogy.expected_rank", answer=view.labels[expected],
                         rank=found.index(expected) + 1, n=len(found)))
        elif expected is not None:
            st.caption(t("embeddings.analogy.expected_missing", answer=view.labels[expected], n=len(found)))


# --- 4. contextual embeddings ---------------------------------------------------------------


def context_section(page: Page) -> None:
    """One word's residual-stream vector in two prompts, compared layer by layer."""
    st.header(t("embeddings.context.header"))
    st.markdown(t("embeddings.context.explain"))
    contextual(page.model_name, page.lang, page.config.n_layer)


def _context_example(part: str) -> str:
    """The chosen example's prompt A, prompt B or word, in the page's language (the fields' default:
    an untouched field follows a language switch; an edited one stays, also after a page change)."""
    return t(f"embeddings.context.{state.get('embeddings_context_preset')}.{part}")


def _fill_context() -> None:
    """Another example chosen: its texts replace the fields' (edited or not)."""
    for part in ("a", "b", "word"):
        state.put(f"embeddings_context_{part}", _context_example(part))


@st.fragment
def contextual(model_name: str, lang: str, n_layer: int) -> None:
    """Two prompts and a word: the word's vector in each, cosine per stage."""
    preset_labels = {k: t(f"embeddings.context.{k}.label") for k in CONTEXT_PRESETS}
    st.selectbox(t("embeddings.context.preset"), CONTEXT_PRESETS, format_func=preset_labels.__getitem__,
                 **state.bind("embeddings_context_preset", options=CONTEXT_PRESETS, then=_fill_context))
    left, right = st.columns(2)
    left.text_input(t("embeddings.context.prompt_a"), max_chars=300,
                    **state.bind("embeddings_context_a", default=_context_example("a")))
    right.text_input(t("embeddings.context.prompt_b"), max_chars=300,
                     **state.bind("embeddings_context_b", default=_context_example("b")))
    word = st.text_input(t("embeddings.context.word"), max_chars=40,
                         **state.bind("embeddings_context_word", default=_context_example("word")))

    runs, spans = [], []
    for key in ("embeddings_context_a", "embeddings_context_b"):
        try:
            with st.spinner(t("embeddings.loading.context")):
                one = run_prompt(model_name, st.session_state[key])
        except PromptProblem as problem:
            st.warning(t(f"prompt.problem.{problem.code}"))
            return
        tokenizer = get_model(model_name).tokenizer
        try:
            span = vectors.locate_word(one.ids, tokenizer.decode, word)
        except ValueError:
            st.warning(t("embeddings.context.not_found", word=md_escape(word.strip()) or "∅",
                         prompt=md_escape(st.session_state[key])))
            return
        runs.append(one)
        spans.append(span)

    for one, span, label in zip(runs, spans, ("A", "B")):
        token = display_token(one.tokens[span.last])
        message = "embeddings.context.single" if span.single_token else "embeddings.context.multi"
        st.caption(t(message, prompt=label, token=md_escape(token), pos=span.last, n=span.last - span.first + 1))

    with st.spinner(t("embeddings.loading.context")):
        result = vectors.contextual_similarity(runs[0].trace, runs[1].trace, spans[0].last, spans[1].last, n_layer)
    stage_labels = [t(f"embeddings.context.stage.{r.stage}", layer=r.layer) if r.layer is not None
                    else t(f"embeddings.context.stage.{r.stage}") for r in result]
    draw.vega_cached(
        similarity_by_stage, (stage_labels, [r.cosine for r in result]),
        dict(title=t("embeddings.context.title", word=word.strip()),
             x_title=t("embeddings.context.stage_axis"), y_title=t("embeddings.lab.col_cosine")),
        width="stretch",
    )
    st.dataframe(
        pd.DataFrame({
            t("embeddings.context.stage_axis"): stage_labels,
            t("embeddings.context.trace_name"): [r.trace_name for r in result],
            t("embeddings.lab.col_cosine"): [f"{r.cosine:.4f}" for r in result],
        }),
        hide_index=True, width="stretch", key="embeddings_context_table",
    )
    if spans[0].last != spans[1].last and get_model(model_name).config.positional != "rope":
        st.info(t("embeddings.context.different_positions"))
    st.markdown(t("embeddings.context.causal"))


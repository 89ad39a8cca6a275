"""Multi-head attention sections, on the live model: every head's pattern for the sidebar prompt, a
behaviour label per head, BertViz's head view, and the seeds' coreference example.

Values come straight from the model's trace (``blocks.L.attn.hook_pattern`` and
``hook_attn_scores``); labels and probes from ``core.lessons.head_analysis``.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import streamlit as st

import ui.charts.common as draw

from core.lessons import head_analysis as ha
from core.engine import names
from ui.charts.attention import (
    HEAD_PICK,
    attention_heatmap,
    grid_is_image,
    grid_pool_factor,
    head_grid_spec,
    head_picker,
    head_view_chart_spec,
    picked_head,
    value_matrix_spec,
)
from ui.charts.vl import hconcat
from ui.components import mha_heads
from ui.i18n import t, translate
from ui import state
from ui.page import Page, relabel_after_language_switch
from ui.resources import get_model, is_foreign, memo, run_prompt
from ui.tokens import display_token

PICK_KEY = "mha_pick"  # the head picker's selection state
PICK_SEEN = "mha_pick_seen"  # the last click already applied


def behaviour_text(b: ha.HeadBehaviour) -> str:
    name = t(f"multi_head_attention.behaviour.{b.label}")
    return name if np.isnan(b.score) else f"{name} {b.score:.2f}"


@memo(maxsize=64)
def head_data(model_name: str, prompt: str) -> tuple[np.ndarray, np.ndarray, list[ha.HeadBehaviour]]:
    """Patterns and scores [layer, head, q, k] and the head labels for one prompt (cached)."""
    loaded = get_model(model_name)
    run = run_prompt(model_name, prompt)
    n_layer = loaded.config.n_layer
    patterns = ha.stack_patterns(run.trace, n_layer)
    scores = np.stack([run.trace[names.act_name("attn_scores", layer=layer)] for layer in range(n_layer)])
    return patterns, scores, ha.label_heads(patterns)


@memo(maxsize=32)
def coref_probes(model_name: str, pair_key: str) -> tuple[ha.CorefProbe, ha.CorefProbe]:
    loaded = get_model(model_name)
    pair = next(p for p in ha.COREF_PAIRS if p.key == pair_key)
    probes = []
    for case in (pair.to_fruit, pair.to_container):
        run = run_prompt(model_name, case.prompt)
        patterns = ha.stack_patterns(run.trace, loaded.config.n_layer)
        probes.append(ha.coreference_probe(case, run.tokens, patterns, run.logits[-1], loaded.tokenizer))
    return probes[0], probes[1]


def token_labels(model_name: str, prompt: str) -> list[str]:
    """Axis labels "3·首都": position and visible token (unique even when tokens repeat)."""
    run = run_prompt(model_name, prompt)
    return [f"{i}·{display_token(tok)}" for i, tok in enumerate(run.tokens)]


@memo(maxsize=128)
def heatmap_spec(model_name: str, prompt: str, layer: int, head: int, show_scores: bool, lang: str) -> dict:
    """The enlarged head's chart, built once per choice (a rerun for another widget reuses it)."""
    patterns, scores, _ = head_data(model_name, prompt)
    values = scores[layer, head] if show_scores else patterns[layer, head]
    kind = translate("multi_head_attention.kind.scores" if show_scores else "multi_head_attention.kind.weights", lang)
    return attention_heatmap(  # weights: the layout is shared by every head of this prompt
        values, token_labels(model_name, prompt),
        title=translate("multi_head_attention.heatmap.title", lang, layer=layer, head=head, kind=kind),
        x_title=translate("multi_head_attention.axis.key", lang),
        y_title=translate("multi_head_attention.axis.query", lang),
        value_title=kind, masked_text=translate("multi_head_attention.masked", lang), scores=show_scores,
    )


def main_heatmap(model_name: str, prompt: str, n_layer: int, n_head: int,
                 behaviours: list[ha.HeadBehaviour]) -> tuple[int, int, bool]:
    lang = st.session_state.get("lang", "en")  # bound now: AppTest formats values outside the run
    # A click on a head in the grid below (``head_grid``) picks that head: applied here, before
    # the boxes are drawn, and only once per click (the chart keeps its selection).
    picked = picked_head(st.session_state.get(PICK_KEY))
    if picked is not None and picked != st.session_state.get(PICK_SEEN):
        st.session_state[PICK_SEEN] = picked
        if picked[0] < n_layer and picked[1] < n_head:
            state.put("mha_layer", picked[0])
            state.put("mha_head", picked[1])
    c1, c2, c3 = st.columns([1, 1, 2])
    layer = c1.selectbox(t("multi_head_attention.layer"), list(range(n_layer)),
                         **state.bind("mha_layer", options=range(n_layer)),
                         format_func=lambda i: translate("multi_head_attention.layer_name", lang, layer=i))
    head = c2.selectbox(t("multi_head_attention.head"), list(range(n_head)),
                        **state.bind("mha_head", options=range(n_head)),
                        format_func=lambda i: translate("multi_head_attention.head_name", lang, head=i))
    show_scores = c3.toggle(t("multi_head_attention.show_scores"), **state.bind("mha_scores"),
                            help=t("multi_head_attention.show_scores.help"))
    layer, head = min(layer, n_layer - 1), min(head, n_head - 1)
    b = behaviours[layer * n_head + head]
    spec = heatmap_spec(model_name, prompt, layer, head, show_scores, lang)
    left, right = st.columns([3, 1])
    with left:
        draw.vega(spec=spec, width="content", live=True)  # another head: new title and cells, same layout
    with right:
        st.markdown(t("multi_head_attention.behaviour.this", label=behaviour_text(b)))
        st.dataframe(pd.DataFrame({
            t("multi_head_attention.behaviour.col"): [t(f"multi_head_attention.behaviour.{k}") for k in ha.BEHAVIOURS],
            t("multi_head_attention.behaviour.score"): [f"{b.scores[k]:.3f}" for k in ha.BEHAVIOURS],
        }), hide_index=True)
        st.caption(t("multi_head_attention.behaviour.help"))
    st.caption(t("multi_head_attention.heatmap.caption_scores" if show_scores else
                 "multi_head_attention.heatmap.caption"))
    return layer, head, show_scores


# the component's words (its key -> this page's i18n key)
BROWSER_TEXT: dict[str, str] = {
    "pick": "multi_head_attention.pick.radio", "layer": "multi_head_attention.layer",
    "head": "multi_head_attention.head", "layer_name": "multi_head_attention.layer_name",
    "head_name": "multi_head_attention.head_name", "title": "multi_head_attention.heatmap.title",
    "key": "multi_head_attention.axis.key", "query": "multi_head_attention.axis.query",
    "masked": "multi_head_attention.masked", "kind_weights": "multi_head_attention.kind.weights",
    "kind_scores": "multi_head_attention.kind.scores", "caption": "multi_head_attention.heatmap.caption",
    "caption_scores": "multi_head_attention.heatmap.caption_scores",
    "behaviour_this": "multi_head_attention.behaviour.this", "behaviour_col": "multi_head_attention.behaviour.col",
    "behaviour_score": "multi_head_attention.behaviour.score", "behaviour_help": "multi_head_attention.behaviour.help",
    "numbers": "multi_head_attention.heatmap.numbers", "view_title": "multi_head_attention.view.title",
    "view_query": "multi_head_attention.view.query", "view_chart": "multi_head_attention.view.chart",
    "view_caption": "multi_head_attention.view.caption",
    "scores_switch": "multi_head_attention.show_scores", "scores_help": "multi_head_attention.show_scores.help",
    "grid_title": "multi_head_attention.grid.title", "grid_show": "multi_head_attention.grid.show",
    "grid_chart": "multi_head_attention.grid.chart", "grid_caption": "multi_head_attention.grid.caption",
    "grid_hover": "multi_head_attention.grid.hover", "grid_table": "multi_head_attention.grid.table",
    "rules": "multi_head_attention.behaviour.rules",
}


@memo(maxsize=32)
def browser_heads_data(model_name: str, prompt: str, lang: str) -> dict:
    """Every head of this prompt for the browser, built once per (prompt, language) and shared."""
    patterns, scores, behaviours = head_data(model_name, prompt)
    rows = []
    for b in behaviours:
        name = translate(f"multi_head_attention.behaviour.{b.label}", lang)
        rows.append({"label": name if np.isnan(b.score) else f"{name} {b.score:.2f}",
                     "scores": [f"{b.scores[k]:.3f}" for k in ha.BEHAVIOURS]})
    tokens = [display_token(tok) for tok in run_prompt(model_name, prompt).tokens]
    return mha_heads.heads_data(
        patterns, scores, token_labels(model_name, prompt), tokens, rows,
        [translate(f"multi_head_attention.behaviour.{k}", lang) for k in ha.BEHAVIOURS],
        {name: translate(key, lang) for name, key in BROWSER_TEXT.items()},
    )


def browser_heads(model_name: str, prompt: str, n_layer: int, n_head: int) -> None:
    """The head picker, the enlarged head, the scores switch, the grid of every head and the head
    view, drawn in the browser: picking a head, a query or a switch sends nothing."""
    lang = st.session_state.get("lang", "en")
    # Out of this model's heads (a link made for a bigger model): the default, as the server's boxes do.
    layer, head = int(state.get("mha_layer")), int(state.get("mha_head"))
    if layer >= n_layer:
        layer = 0
        state.put("mha_layer", layer)
    if head >= n_head:
        head = 0
        state.put("mha_head", head)
    query = query_of(model_name, prompt)
    show_scores, show_grid = bool(state.get("mha_scores")), bool(state.get("mha_grid"))
    state.show_notes()  # a crafted value's fallback note
    prompt_id = hashlib.sha256(f"{model_name}\0{prompt}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
    mha_heads.mha_heads(browser_heads_data(model_name, prompt, lang), layer=layer, head=head, query=query,
                        prompt_id=prompt_id, show_scores=show_scores, show_grid=show_grid, key="mha_heads")


def query_of(model_name: str, prompt: str) -> int:
    """The head view's query position: a new prompt starts from its last token (it predicts the next)."""
    n = len(run_prompt(model_name, prompt).ids)
    if st.session_state.get("mha_query_prompt") not in (None, (model_name, prompt)):
        state.put("mha_query", n - 1)
    st.session_state["mha_query_prompt"] = (model_name, prompt)
    query = int(state.get("mha_query", n - 1))
    if query >= n:
        query = n - 1
        state.put("mha_query", query)
    return query


def outline_head(picker: dict, layer: int, head: int) -> dict:
    """The cached head picker with (layer, head) outlined: only its small table is rebuilt
    (the ``current`` column ``head_picker`` fills from ``selected``)."""
    datasets = {}
    for name, frame in picker["datasets"].items():
        if isinstance(frame, pd.DataFrame) and {"layer", "head", "current"} <= set(frame.columns):
            frame = frame.assign(current=(frame["layer"] == layer) & (frame["head"] == head))
        datasets[name] = frame
    return {**picker, "datasets": datasets}


def all_heads(patterns: np.ndarray, scores: np.ndarray, labels: list[str], behaviours: list[ha.HeadBehaviour],
              layer: int, head: int, show_scores: bool, *, picker: bool = True) -> None:
    """Every head's pattern small; ``picker``: the server's clickable head picker above them
    (off when the browser's radio group picks heads: its outline would lag the browser's pick)."""
    st.subheader(t("multi_head_attention.grid.title"))
    if not st.toggle(t("multi_head_attention.grid.show"), **state.bind("mha_grid")):
        return
    if picker:
        server_picker(behaviours, layer, head)
    _grid(patterns, scores, labels, behaviours, show_scores)


def server_picker(behaviours: list[ha.HeadBehaviour], layer: int, head: int) -> None:
    """The clickable layers × heads chart (a click reruns the section, ``main_heatmap`` applies it)."""
    picker = draw.vega_spec_cached(head_picker, (  # built once per (prompt, language)
        [b.layer for b in behaviours], [b.head for b in behaviours],
        [t(f"multi_head_attention.behaviour.{b.label}") for b in behaviours], [b.score for b in behaviours],
    ), dict(
        title=t("multi_head_attention.pick.title"), x_title=t("multi_head_attention.head"),
        y_title=t("multi_head_attention.layer"), label_title=t("multi_head_attention.behaviour.col"),
        score_title=t("multi_head_attention.behaviour.score"), selected=None,
    ))
    draw.vega(outline_head(picker, layer, head), key=PICK_KEY, on_select="rerun", selection_mode=HEAD_PICK,
              width="stretch")


def _grid(patterns: np.ndarray, scores: np.ndarray, labels: list[str], behaviours: list[ha.HeadBehaviour],
          show_scores: bool) -> None:
    n_layer, n_head = patterns.shape[:2]
    # Each cell's head, named in its tooltip ("L0 H1"); the picker above names what each head does.
    titles = [f"L{b.layer} H{b.head}" for b in behaviours]
    kind = t("multi_head_attention.kind.scores" if show_scores else "multi_head_attention.kind.weights")
    # Built once per input and shared; no frame around the chosen head here (the picker above
    # outlines it), so a head pick leaves the grid's spec unchanged and the browser keeps it.
    with st.container(key="mha_grid_box"):
        draw.vega_cached(head_grid_spec, (scores if show_scores else patterns, labels, titles), dict(
            title=t("multi_head_attention.grid.chart", layers=n_layer, heads=n_head, kind=kind),
            x_title=t("multi_head_attention.axis.key"), y_title=t("multi_head_attention.axis.query"),
            value_title=kind, layer_names=[t("multi_head_attention.layer_name", layer=i) for i in range(n_layer)],
            head_names=[f"H{h}" for h in range(n_head)], head_title=t("multi_head_attention.head"),
            scores=show_scores,
        ), width="stretch", key="mha_grid_chart")
    if not grid_is_image(n_layer, n_head, len(labels)):
        how = t("multi_head_attention.grid.hover")
    elif (pool := grid_pool_factor(n_layer, n_head, len(labels))) > 1:
        how = t("multi_head_attention.grid.pooled", k=pool)
    else:
        how = t("multi_head_attention.grid.image")
    st.caption(t("multi_head_attention.grid.caption"))
    st.caption(how)
    with st.expander(t("multi_head_attention.grid.table")):
        st.dataframe(pd.DataFrame([{
            t("multi_head_attention.layer"): b.layer,
            t("multi_head_attention.head"): b.head,
            t("multi_head_attention.behaviour.col"): t(f"multi_head_attention.behaviour.{b.label}"),
            **{t(f"multi_head_attention.behaviour.{k}"): round(b.scores[k], 3) for k in ha.BEHAVIOURS},
        } for b in behaviours]), hide_index=True, width="stretch")
        st.caption(t("multi_head_attention.behaviour.rules"))


@memo(maxsize=128)
def head_view_spec(model_name: str, prompt: str, layer: int, query: int, lang: str) -> dict:
    patterns, _, _ = head_data(model_name, prompt)
    tokens = [display_token(tok) for tok in run_prompt(model_name, prompt).tokens]
    n_head = patterns.shape[1]
    return head_view_chart_spec(  # the chart's layout is shared by prompts of the same length
        patterns[layer, :, query, :], tokens, query,
        [translate("multi_head_attention.head_name", lang, head=h) for h in range(n_head)],
        title=translate("multi_head_attention.view.chart", lang, layer=layer, token=tokens[query]),
        weight_title=translate("multi_head_attention.kind.weights", lang),
        query_side=translate("multi_head_attention.axis.query", lang),
        key_side=translate("multi_head_attention.axis.key", lang), head_title=translate("multi_head_attention.head", lang),
    )


def head_view(model_name: str, prompt: str, tokens: list[str], layer: int) -> None:
    st.subheader(t("multi_head_attention.view.title"))
    n = len(tokens)
    options = list(range(n))
    if st.session_state.get("mha_query_prompt") not in (None, (model_name, prompt)):
        # A new prompt: start from its last token, the one that predicts the next token.
        state.put("mha_query", n - 1)
    st.session_state["mha_query_prompt"] = (model_name, prompt)
    query = st.selectbox(t("multi_head_attention.view.query"), options,
                         **state.bind("mha_query", default=n - 1, options=options),
                         format_func=lambda i: f"{i} · {tokens[i]}")
    query = min(int(query), n - 1)
    draw.vega(spec=head_view_spec(model_name, prompt, layer, query, st.session_state.get("lang", "en")),
              width="content", live=True)  # another query or layer: new title and lines, same layout
    st.caption(t("multi_head_attention.view.caption"))


@memo(maxsize=32)
def coref_spec(weights: np.ndarray, shift: np.ndarray, rows: tuple[str, ...], columns: tuple[str, ...],
               token: str, lang: str) -> dict:
    """Weights (blue, 0–1) next to each head's shift (red/blue around 0): two scales, one chart."""
    y_title = translate("multi_head_attention.coref.axis.y", lang)
    left = value_matrix_spec(
        weights, list(rows), list(columns), title=translate("multi_head_attention.kind.weights", lang),
        x_title=translate("multi_head_attention.coref.axis.x", lang), y_title=y_title,
        value_title=translate("multi_head_attention.kind.weights", lang), value_format=".2f", diverging=False,
        domain=(0.0, 1.0), cell=30, cell_width=135,  # "sweet → apple" whole, even in presenter mode
    )
    shift_name = translate("multi_head_attention.coref.shift_col", lang)
    right = value_matrix_spec(
        shift[:, None], list(rows), [shift_name], title=shift_name, x_title=" ", y_title=y_title,
        value_title=shift_name, value_format="+.2f", diverging=True, cell=30, cell_width=90,
    )
    return hconcat([left, right], title=translate("multi_head_attention.coref.chart", lang, token=token), spacing=24,
                   independent=("color",))


def coref_table(model_name: str, pair_key: str, n_head: int) -> tuple[list[str], list[str], np.ndarray, np.ndarray, str]:
    """Rows (heads), columns (trait → noun), weights, each head's shift and the prompts' last token."""
    to_fruit, to_container = coref_probes(model_name, pair_key)
    pair = next(p for p in ha.COREF_PAIRS if p.key == pair_key)
    tokenizer = get_model(model_name).tokenizer
    fruit, container = pair.fruit, pair.container
    trait_f, trait_c = pair.fruit_trait, pair.container_trait
    columns = [f"{trait_f} → {fruit}", f"{trait_f} → {container}", f"{trait_c} → {fruit}", f"{trait_c} → {container}"]
    n_layer = to_fruit.attention.shape[0]
    rows = [f"L{layer} H{h}" for layer in range(n_layer) for h in range(n_head)]
    matrix = np.column_stack([
        to_fruit.attention[..., 0].ravel(), to_fruit.attention[..., 1].ravel(),
        to_container.attention[..., 1].ravel(), to_container.attention[..., 0].ravel(),
    ])
    shift = ha.coref_shift(to_fruit, to_container)
    last = display_token(tokenizer.decode([tokenizer.encode(pair.to_fruit.prompt)[-1]]))
    return rows, columns, matrix, shift, last


def coref_chart(model_name: str, pair_key: str, lang: str, n_head: int) -> dict:
    rows, columns, matrix, shift, last = coref_table(model_name, pair_key, n_head)
    return coref_spec(matrix, shift.ravel(), tuple(rows), tuple(columns), last, lang)


@st.cache_resource(show_spinner=False)
def warm_coreference(model_name: str, lang: str, n_head: int) -> bool:
    """Every pair's probes (two forward passes) and chart, computed once per server in the
    background after the page's first visit: a student's first pick of a pair is then a lookup."""
    from serving.registry import SHUTTING_DOWN, start_worker

    def work() -> None:
        for pair in ha.COREF_PAIRS:
            if SHUTTING_DOWN.is_set():
                return
            try:
                coref_chart(model_name, pair.key, lang, n_head)
            except Exception:  # a noun this model's tokenizer lacks: the page says so when it is picked
                continue

    start_worker(work, f"warm-coref-{model_name}-{lang}")
    return True


def coreference(model_name: str, lang: str, n_head: int) -> None:
    st.subheader(t("multi_head_attention.coref.title"))
    st.markdown(t("multi_head_attention.coref.intro"))
    pairs = sorted(ha.COREF_PAIRS, key=lambda p: p.lang != lang)  # the page's language first
    keys = [p.key for p in pairs]
    if st.session_state.get("mha_coref_lang") != lang:  # a language switch starts from that language's pair
        if st.session_state.get("mha_coref_lang") is not None:
            state.put("mha_coref", keys[0])
        st.session_state["mha_coref_lang"] = lang
    key = st.selectbox(t("multi_head_attention.coref.pair"), keys, **state.bind("mha_coref", default=keys[0], options=keys),
                       format_func=lambda k: translate(f"multi_head_attention.coref.pair.{k}", lang))
    pair = next(p for p in ha.COREF_PAIRS if p.key == key)
    if is_foreign(model_name):
        st.info(t("foreign.tiny_world_coref", name=model_name))
    try:
        to_fruit, to_container = coref_probes(model_name, key)
    except ValueError:  # a noun not found among this model's tokens
        st.warning(t("multi_head_attention.coref.problem"))
        return
    tokenizer = get_model(model_name).tokenizer
    word = lambda i: display_token(tokenizer.decode([i]))  # noqa: E731
    cols = st.columns(2)
    for col, probe in zip(cols, (to_fruit, to_container)):
        with col:
            st.markdown(t("multi_head_attention.coref.prompt", prompt=probe.case.prompt.replace("*", r"\*")))
            top_id, top_p = probe.top[0]
            verdict = t("multi_head_attention.coref.right" if probe.correct else
                        "multi_head_attention.coref.partly" if probe.prefers_answer else
                        "multi_head_attention.coref.wrong")
            st.markdown(t("multi_head_attention.coref.prediction", top=word(top_id), p=f"{100 * top_p:.1f}",
                          answer=word(probe.answer_id), pa=f"{100 * probe.p_answer:.1f}",
                          distractor=word(probe.distractor_id), pd=f"{100 * probe.p_distractor:.1f}",
                          verdict=verdict))
    st.caption(t("multi_head_attention.coref.verdicts"))
    rows, _, _, shift, _ = coref_table(model_name, key, n_head)
    fruit, container = pair.fruit, pair.container
    draw.vega(spec=coref_chart(model_name, key, lang, n_head), width="content")
    best = int(np.argmax(np.abs(shift.ravel())))
    st.markdown(t("multi_head_attention.coref.best", head=rows[best], shift=f"{shift.ravel()[best]:+.2f}",
                  fruit=fruit, container=container))
    st.caption(t("multi_head_attention.coref.caption"))
    trained = get_model(model_name).metrics.get("coref_heads", {}).get("top_heads", [])
    if trained:
        heads = ", ".join(f"L{h['layer']} H{h['head']} (+{h['margin']:.2f})" for h in trained)
        st.caption(t("multi_head_attention.coref.trained_heads", heads=heads))


# --- the page's frame -----------------------------------------------------------------------


def prepare() -> None:
    """Before the title: translated option labels follow a language switch."""
    relabel_after_language_switch("mha_lang_seen", ("mha_layer", "mha_head", "mha_query"))


def model_line(page: Page) -> None:
    """Which model, how many layers and heads, how many tokens."""
    cfg = page.config
    st.caption(t("multi_head_attention.model_line", model=page.model_name, layers=cfg.n_layer, heads=cfg.n_head,
                 d_head=cfg.d_head, n=len(page.run.tokens)))


@st.fragment
def heads_section(model_name: str, prompt: str, n_layer: int, n_head: int) -> None:
    """The enlarged head, the grid and the head view. Where every head fits in the browser
    (``mha_heads.fits``) the component draws them all and its pickers and switches send nothing;
    on a prompt too long for that, the server's pickers and toggles rerun only this fragment."""
    patterns, scores, behaviours = head_data(model_name, prompt)
    tokens = [display_token(tok) for tok in run_prompt(model_name, prompt).tokens]
    labels = [f"{i}·{tok}" for i, tok in enumerate(tokens)]
    if mha_heads.fits(n_layer, n_head, len(tokens)):  # every head fits in the browser: it draws them all
        browser_heads(model_name, prompt, n_layer, n_head)
        return
    layer, head, show_scores = main_heatmap(model_name, prompt, n_layer, n_head, behaviours)
    all_heads(patterns, scores, labels, behaviours, layer, head, show_scores)
    st.fragment(head_view)(model_name, prompt, tokens, layer)  # the query choice reruns only the head view


def heads_and_coreference(page: Page) -> None:
    """The live model's heads (a fragment), then the seeds' coreference example (a fragment)."""
    cfg = page.config
    heads_section(page.model_name, page.run.text, cfg.n_layer, cfg.n_head)
    st.fragment(coreference)(page.model_name, page.lang, cfg.n_head)
    warm_coreference(page.model_name, page.lang, cfg.n_head)

"""The Training page's sections (``pages/training.py`` calls them in order).

1. The loss lesson: cross-entropy = −ln p(correct), the textbook example's numbers, ln(vocab).
2. Replay: a built-in model's snapshots (``core.training.snapshots``) on a step slider with ▶ play; the
   loss curves, the next-token distribution and −ln p(target), the strongest coreference head's
   attention and the 3-D PCA of the embedding table all follow the slider. "View the app at
   step s" puts "classic @ step s" in this session's sidebar model list and selects it.
3. Live training: a micro-GPT trained from scratch in a separate process (``serving.live_train``),
   queued fairly, with a live loss chart; the finished model joins this session's model list
   and can be downloaded as safetensors.

Every section is an ``st.fragment``: a control reruns its own section only. Snapshot models are
loaded once into the shared registry (``ui.session_models``) and never modified.
"""

from __future__ import annotations

import secrets
import threading
from typing import Any

import numpy as np
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import core
from serving import live_train
from core.training import replay
from core.engine.names import act_name
from core.engine.prompt import PromptProblem
from core.training.snapshots import MAX_STEP
from core.training.train import PRESETS, SHAPES
from ui import session_models, state
from ui.charts import training as charts
from ui.charts.common import heatmap, vega
from ui.charts.space3d import embedding_space, joined_space, prompt_ring
from ui.components import space3d
from ui.charts.output import token_labels
from ui.charts.vectors import MapText
from ui.i18n import load_strings, t, translate
from ui.precompute import EMBEDDINGS_TABLE, embeddings_table
from ui.resources import PromptRun, get_model, memo, run_prompt, shared
from ui.text import escape_markdown
from ui.tokens import display_token

PAGE = "training"
PLAY_EVERY_S = 1.2  # one snapshot per tick while playing
POLL_EVERY_S = 1.0  # the live section's refresh (and heartbeat) while a job is queued or running
TOP_K = 10
TARGET_DEFAULTS = {"en": "Paris", "zh": "巴黎"}
EXAMPLES = ((0.9, "p = 0.9 → 0.105"), (0.01, "p = 0.01 → 4.6"))

_PLAYING = "_training_playing"
_SESSION = "_training_session"
_JOB = "_training_job"
_TRAINED = "_training_last"
_COUNT = "_training_count"

_P = (PAGE,)
state.choice("train_model", tuple(core.BUILTIN_PRESETS), "classic", _P, "training.replay.model")
state.integer("train_step", 0, MAX_STEP, 0, _P, "training.replay.step")
state.text("train_target", 40, lambda lang: TARGET_DEFAULTS.get(lang, "Paris"), _P, "training.replay.target")
state.number("train_p", 0.001, 1.0, 0.9, _P, "training.lesson.p")
state.choice("train_shape", tuple(SHAPES), "tiny", _P, "training.live.shape")
state.choice("train_design", tuple(PRESETS), "classic", _P, "training.live.design")
state.integer("train_steps", 1, max(live_train.STEP_LIMITS.values()), live_train.DEFAULT_STEPS["tiny"], _P,
              "training.live.steps")
state.number("train_lr", 1e-4, 0.05, 0.01, _P, "training.live.lr")
state.integer("train_batch", 1, 64, 16, _P, "training.live.batch")
state.integer("train_seed", 0, state.MAX_SEED, 0, _P, "training.live.seed")
state.choice("train_corpus", live_train.CORPORA, "capitals", _P, "training.live.corpus")

_MANAGER: live_train.JobManager | None = None
_MANAGER_LOCK = threading.Lock()


def manager() -> live_train.JobManager:
    """The server's one training queue (created on first use)."""
    global _MANAGER
    with _MANAGER_LOCK:
        if _MANAGER is None:
            _MANAGER = live_train.JobManager()
        return _MANAGER


def _session_id() -> str:
    if _SESSION not in st.session_state:
        st.session_state[_SESSION] = secrets.token_hex(6)
    return st.session_state[_SESSION]


# --- 1. the loss lesson ------------------------------------------------------------------------


@memo(maxsize=64)
def _ce_spec(p: float, lang: str, vocab: int) -> dict:
    return charts.cross_entropy_curve(
        p, EXAMPLES, title=t("training.lesson.chart.title"), x_title=t("training.lesson.chart.x"),
        y_title=t("training.lesson.chart.y"), point_title=t("training.lesson.chart.point"))


@st.fragment
def loss_lesson(model_name: str) -> None:
    st.header(t("training.lesson.header"))
    vocab = int(get_model(model_name).config.vocab_size)
    st.markdown(t("training.lesson.explain", vocab=f"{vocab:,}", uniform=f"{replay.uniform_loss(vocab):.2f}",
                  p_uniform=f"{1 / vocab:.6f}"))
    cols = st.columns([2, 3])
    with cols[0]:
        p = st.slider(t("training.lesson.p"), min_value=0.001, max_value=1.0, step=0.001, format="%.3f",
                      **state.bind("train_p"))
        st.metric(t("training.lesson.metric"), f"{replay.cross_entropy(p):.3f}")
        st.table({
            t("training.lesson.col.p"): ["0.9", "0.01", f"1/{vocab:,}"],
            t("training.lesson.col.loss"): [f"{replay.cross_entropy(0.9):.3f}", f"{replay.cross_entropy(0.01):.2f}",
                                            f"{replay.uniform_loss(vocab):.2f}"],
            t("training.lesson.col.meaning"): [t("training.lesson.row.confident"), t("training.lesson.row.wrong"),
                                               t("training.lesson.row.uniform")],
        })
    with cols[1]:
        vega(_ce_spec(float(p), state.get(state.LANG), vocab), width="stretch", key="training_ce_chart")


# --- 2. replay ---------------------------------------------------------------------------------


def _target_id(tokenizer: Any, word: str) -> tuple[int, int] | None:
    """(token id, tokens in the word) of the target; " word" first for Latin text (GPT-style)."""
    word = word.strip()
    if not word:
        return None
    latin = word.isascii()
    for candidate in ([" " + word, word] if latin else [word, " " + word]):
        try:
            ids = tokenizer.encode(candidate)
        except Exception:
            continue
        if len(ids) == 1:
            return int(ids[0]), 1
    try:
        ids = tokenizer.encode((" " + word) if latin else word)
    except Exception:
        return None
    return (int(ids[0]), len(ids)) if ids else None


@memo(maxsize=64)
def _loss_spec(preset: str, step: int, lang: str) -> dict:
    index = session_models.snapshot_index(preset)
    steps, values = replay.loss_curve(index.train_log)
    text = charts.LossText(
        title=t("training.replay.loss.title", model=preset), x_title=t("training.axis.step"),
        y_title=t("training.axis.loss"), series_title=t("training.axis.series"), train=t("training.series.train"),
        heldout=t("training.series.heldout"), uniform=t("training.series.uniform"), step_now=t("training.series.now"),
    )
    held = list(index.heldout_log) or [(e.step, e.heldout_loss) for e in index.entries]
    return charts.loss_curves(steps, values, held, index.steps, step,
                              replay.uniform_loss(index.config.vocab_size), text=text)


@memo(maxsize=256)
def _bars_spec(model_name: str, prompt: str, target_id: int, lang: str) -> tuple[dict, replay.NextToken]:
    loaded = get_model(model_name)
    run = run_prompt(model_name, prompt)
    nt = replay.next_token(run.logits[-1], target_id, k=TOP_K)
    ids = list(nt.top_ids)
    probs = list(nt.top_probs)
    if target_id not in ids:
        ids.append(target_id)
        probs.append(nt.target_prob)
    labels = token_labels(loaded.tokenizer, ids)
    spec = charts.next_token_bars(labels, probs, [i == target_id for i in ids], text=charts.BarsText(
        title=t("training.replay.next.title", last=display_token(run.tokens[-1]) if run.tokens else ""),
        x_title=t("training.axis.prob"), y_title=t("training.axis.token"), kind_title=t("training.axis.kind"),
        target=t("training.series.target"), other=t("training.series.other")))
    return spec, nt


@memo(maxsize=256)
def _attention_spec(model_name: str, prompt: str, layer: int, head: int, lang: str) -> dict:
    run = run_prompt(model_name, prompt)
    pattern = np.asarray(run.trace[act_name("pattern", layer=layer)])[head]  # (q_pos, k_pos)
    labels = [display_token(x) for x in run.labels()]
    return heatmap(pattern, labels, labels, title=t("training.replay.attn.title", layer=layer, head=head),
                   x_title=t("training.axis.key"), y_title=t("training.axis.query"),
                   value_title=t("training.axis.weight"))


def _play_toggle() -> None:
    st.session_state[_PLAYING] = not st.session_state.get(_PLAYING, False)


def _stop_playing() -> None:
    st.session_state[_PLAYING] = False


def _view_at_step(preset: str, step: int) -> None:
    name = session_models.snapshot_model_name(preset, step)
    session_models.offer(name)
    state.put(state.MODEL, name)
    st.session_state["_training_viewing"] = name


def replay_section(prompt: str) -> None:
    """The replay fragment; while ▶ plays it reruns itself every PLAY_EVERY_S seconds."""
    playing = bool(st.session_state.get(_PLAYING, False))
    st.fragment(run_every=PLAY_EVERY_S if playing else None)(_replay)(prompt)


def _replay(prompt: str) -> None:
    """The chosen snapshot: its losses, its next-token guess, its attention and its embedding map."""
    st.header(t("training.replay.header"))
    st.markdown(t("training.replay.explain"))
    picked = _replay_controls()
    if picked is None:
        return
    preset, step, target_word = picked
    index = session_models.snapshot_index(preset)
    entry = index.entry(step)
    name = session_models.snapshot_model_name(preset, step)
    with st.spinner(t("training.replay.loading")):
        loaded = get_model(name)
    try:
        run = run_prompt(name, prompt)
    except PromptProblem as problem:
        st.warning(t(f"prompt.problem.{problem.code}"))
        return
    if run.truncated_from is not None:  # the same note every model page gives for a too-long prompt
        st.info(t("prompt.truncated", n=run.truncated_from, kept=len(run.ids), n_ctx=len(run.ids) + 1))
    lang = state.get(state.LANG)
    found = _target_id(loaded.tokenizer, target_word)
    metrics = st.columns(5)
    metrics[0].metric(t("training.metric.step"), f"{step:,} / {index.total_steps:,}")
    metrics[1].metric(t("training.metric.tokens"), f"{entry.tokens_seen:,}")
    metrics[2].metric(t("training.metric.train"), f"{entry.train_loss:.3f}")
    metrics[3].metric(t("training.metric.heldout"), f"{entry.heldout_loss:.3f}",
                      help=t("training.metric.heldout.help", uniform=f"{replay.uniform_loss(index.config.vocab_size):.2f}"))
    _loss_and_target(preset, step, name, run, found, lang, metrics[4])
    left, right = st.columns(2)
    with left:
        _strongest_head(preset, name, run, lang)
    with right:
        _snapshot_map(name, step, run)


def _replay_controls() -> tuple[str, int, str] | None:
    """Model, target word, step slider, ▶ play and "view the app at this step": (preset, step,
    target word), or None (after a warning) when the model has no snapshots."""
    presets = list(core.BUILTIN_PRESETS)
    top = st.columns([1, 1])
    preset = top[0].selectbox(t("training.replay.model"), presets, **state.bind("train_model", options=presets),
                              format_func=lambda p, lang=state.get(state.LANG): translate(f"sidebar.model.{p}", lang))
    steps = list(session_models.snapshot_steps(preset))
    if not steps:
        st.warning(t("training.replay.none", model=preset))
        return
    playing = bool(st.session_state.get(_PLAYING, False))
    if playing:  # advance one snapshot per tick; stop at the last one
        current = st.session_state.get(state.SPECS["train_step"].durable, steps[0])
        later = [s for s in steps if s > current]
        if later:
            st.session_state[state.SPECS["train_step"].durable] = later[0]
        else:
            st.session_state[_PLAYING] = False
            st.rerun()  # the whole page: the fragment is drawn again without its timer
    target_word = top[1].text_input(t("training.replay.target"), max_chars=40, **state.bind("train_target"),
                                    help=t("training.replay.target.help"))
    step = st.select_slider(t("training.replay.step"), options=steps,
                            **state.bind("train_step", options=steps, default=steps[0], then=_stop_playing),
                            format_func=str, help=t("training.replay.step.help"))
    buttons = st.columns([1, 2, 3])
    buttons[0].button(t("training.replay.pause") if playing else t("training.replay.play"), key="training_play",
                      on_click=_play_toggle, width="stretch")
    if buttons[1].button(t("training.replay.view", step=f"{step:,}"), key="training_view", width="stretch",
                         help=t("training.replay.view.help")):
        _view_at_step(preset, step)
        st.rerun()  # the sidebar (outside this fragment) shows the new choice
    viewing = st.session_state.get("_training_viewing")
    if viewing and viewing == state.get(state.MODEL):
        buttons[2].caption(t("training.replay.viewing", name=viewing))
    return preset, step, target_word


def _loss_and_target(preset: str, step: int, name: str, run: PromptRun, found: tuple[int, int] | None, lang: str,
                     target_metric: DeltaGenerator) -> None:
    """The loss curves up to this step beside the next-token distribution and −ln p(target)."""
    tokenizer = get_model(name).tokenizer
    left, right = st.columns(2)
    with left:
        vega(_loss_spec(preset, step, lang), width="stretch", key="training_loss_chart")
    with right:
        if found is None:
            st.info(t("training.replay.target.none"))
            nt = None
        else:
            target_id, n_tokens = found
            spec, nt = _bars_spec(name, run.text, target_id, lang)
            vega(spec, width="stretch", key="training_next_chart")
            if n_tokens > 1:
                st.caption(t("training.replay.target.first", n=n_tokens))
    if nt is not None:
        shown = escape_markdown(display_token(tokenizer.decode([nt.target_id])))  # token text is data
        target_metric.metric(t("training.metric.target", target=shown),
                             f"{nt.target_loss:.3f}", help=t("training.metric.target.help", p=f"{nt.target_prob:.4f}",
                                                             rank=nt.target_rank))
        st.markdown(t("training.replay.target.say", target=shown,
                      p=f"{nt.target_prob:.4f}", loss=f"{nt.target_loss:.3f}", rank=nt.target_rank))


def _strongest_head(preset: str, name: str, run: PromptRun, lang: str) -> None:
    """The trained model's strongest coreference head, as this snapshot attends with it."""
    config = get_model(name).config
    head = replay.strongest_coref_head(get_model(preset).metrics)
    if head is None or head[0] >= config.n_layer or head[1] >= config.n_head:
        st.info(t("training.replay.attn.none"))
    else:
        vega(_attention_spec(name, run.text, head[0], head[1], lang), width="stretch", key="training_attn_chart")
        st.caption(t("training.replay.attn.caption", layer=head[0], head=head[1]))


def _snapshot_map(name: str, step: int, run: PromptRun) -> None:
    """The snapshot's embedding table in 3-D (PCA), the prompt's tokens ringed."""
    view = shared(name, EMBEDDINGS_TABLE) or shared(name, EMBEDDINGS_TABLE + ".on_demand", embeddings_table)
    known = load_strings("en")  # a category without a translation shows its key, never a missing-key mark
    names = {c: t(f"embeddings.category.{c}") if f"embeddings.category.{c}" in known else c
             for c in dict.fromkeys(c for c in view.categories if c)}
    ratio = view.projection.explained_variance_ratio
    text = MapText(title=t("training.replay.pca.title", step=f"{step:,}"), axis=t("embeddings.map.axis"),
                   token=t("embeddings.axis.token"), token_id=t("embeddings.lookup.col_id"),
                   category=t("embeddings.map.category"), other=t("embeddings.map.other"),
                   prompt=t("embeddings.map.prompt"))
    # The snapshot's map, built once per (snapshot, language) and shared; the prompt's ring per prompt.
    points = space3d.cached(embedding_space, (view.projection.coords, view.labels, view.categories, names, ratio),
                            dict(text=text, show_other=True, space_labels=space3d.space_labels(),
                                 # the tokens the model saw in training (as on Embeddings): an unseen row is noise
                                 shown_ids=sorted({*view.trained, *run.ids}) if view.trained else None))
    ring = space3d.cached(prompt_ring, (view.projection.coords, list(run.ids),
                                        [display_token(x) for x in run.tokens]), dict(name=text.prompt))
    space3d.space3d(joined_space(points, ring), key="training_pca_chart")
    st.caption(t("training.replay.pca.caption"))


# --- 3. live training --------------------------------------------------------------------------


def _spec_from_controls(corpus_text: str | None) -> live_train.JobSpec:
    return live_train.JobSpec(
        shape=state.get("train_shape"), design=state.get("train_design"), steps=int(state.get("train_steps")),
        lr=float(state.get("train_lr")), batch_size=int(state.get("train_batch")), seed=int(state.get("train_seed")),
        corpus=state.get("train_corpus"), text=corpus_text if state.get("train_corpus") == "upload" else None,
    )


def _start(corpus_text: str | None) -> None:
    try:
        spec = _spec_from_controls(corpus_text)
    except ValueError:
        st.session_state["_training_problem"] = "bad_spec"
        return
    try:
        st.session_state[_JOB] = manager().submit(_session_id(), spec)
        st.session_state.pop("_training_problem", None)
    except live_train.JobError as err:
        st.session_state["_training_problem"] = err.code


@st.fragment
def live_controls() -> None:
    st.header(t("training.live.header"))
    st.markdown(t("training.live.explain"))
    shapes = list(SHAPES)
    cols = st.columns(4)
    shape = cols[0].selectbox(t("training.live.shape"), shapes, **state.bind("train_shape"),
                              format_func=lambda s, lang=state.get(state.LANG): translate(f"training.shape.{s}", lang))
    cols[1].selectbox(t("training.live.design"), list(PRESETS), **state.bind("train_design"),
                      format_func=lambda d, lang=state.get(state.LANG): translate(f"sidebar.model.{d}", lang))
    corpora = list(live_train.CORPORA)
    corpus = cols[2].selectbox(t("training.live.corpus"), corpora, **state.bind("train_corpus"),
                               format_func=lambda c, lang=state.get(state.LANG): translate(f"training.corpus.{c}", lang))
    cols[3].number_input(t("training.live.seed"), min_value=0, max_value=state.MAX_SEED, step=1,
                         **state.bind("train_seed"))
    cols = st.columns(3)
    limit = live_train.STEP_LIMITS[shape]
    cols[0].number_input(t("training.live.steps"), min_value=1, max_value=limit, step=10,
                         **state.bind("train_steps", high=limit), help=t("training.live.steps.help", n=limit))
    cols[1].number_input(t("training.live.lr"), min_value=1e-4, max_value=0.05, step=1e-3, format="%.4f",
                         **state.bind("train_lr"))
    cols[2].number_input(t("training.live.batch"), min_value=1, max_value=64, step=1, **state.bind("train_batch"))
    corpus_text = None
    if corpus == "upload":
        upload = st.file_uploader(t("training.live.upload"), type=["txt"], key="training_upload",
                                  help=t("training.live.upload.help"))
        if upload is not None:
            try:
                corpus_text = live_train.check_upload(upload.getvalue())
                st.caption(t("training.live.upload.ok", chars=f"{len(corpus_text):,}"))
            except ValueError as err:
                st.error(t(f"training.upload.{err}"))
    job_id = st.session_state.get(_JOB)
    busy = job_id is not None and _active(job_id)
    ready = corpus != "upload" or corpus_text is not None
    if st.button(t("training.live.start"), key="training_start", type="primary", disabled=busy or not ready):
        _start(corpus_text)
        st.rerun()  # the status section starts polling
    problem = st.session_state.get("_training_problem")
    if problem:
        st.warning(t(f"training.problem.{problem}"))
    counts = manager().counts()
    st.caption(t("training.live.server", running=counts["running"], slots=counts["slots"], queued=counts["queued"]))


def _active(job_id: str) -> bool:
    view = manager().poll(job_id)
    return view is not None and view.active


def live_status() -> None:
    """The job's progress; polls (and so keeps the job's heartbeat) while it is queued or running."""
    job_id = st.session_state.get(_JOB)
    polling = job_id is not None and _active(job_id)
    st.fragment(run_every=POLL_EVERY_S if polling else None)(_status)()


def _live_text() -> charts.LossText:
    return charts.LossText(
        title=t("training.live.chart.title"), x_title=t("training.axis.step"), y_title=t("training.axis.loss"),
        series_title=t("training.axis.series"), train=t("training.series.train"), heldout=t("training.series.heldout"),
        uniform=t("training.series.uniform"), step_now=t("training.series.now"),
    )


def _stop_job() -> None:
    job_id = st.session_state.get(_JOB)
    if job_id is not None:
        manager().stop(job_id)


def _status() -> None:
    job_id = st.session_state.get(_JOB)
    if job_id is not None:
        view = manager().poll(job_id)
        if view is None:
            st.session_state[_JOB] = None
        elif view.state == live_train.QUEUED:
            st.info(t("training.live.queued", position=view.position, seconds=max(1, round(view.eta_s or 0))))
            st.button(t("training.live.cancel"), key="training_stop", on_click=_stop_job)
        elif view.state == live_train.RUNNING:
            total = view.spec.steps
            done = view.steps_done
            device = view.info.get("device", "")
            st.progress(min(1.0, done / total), text=t("training.live.progress", done=done, total=total,
                                                       seconds=round(view.eta_s or 0)))
            if device:
                st.caption(t("training.live.device.cuda" if device.startswith("cuda") else "training.live.device.cpu"))
            st.button(t("training.live.stop"), key="training_stop", on_click=_stop_job)
            if view.points:
                vega(charts.live_loss(view.points, view.init_loss, total, text=_live_text()),
                     width="stretch", key="training_live_chart")
        else:
            _finish(view)
            st.rerun()  # the sidebar's model list (outside this fragment) gains the model
    last = st.session_state.get(_TRAINED)
    if last:
        _show_finished(last)


def _finish(view: live_train.JobView) -> None:
    st.session_state[_JOB] = None
    manager().forget(view.job_id)
    if view.state in (live_train.DONE, live_train.STOPPED) and view.result is not None:
        count = int(st.session_state.get(_COUNT, 0)) + 1
        st.session_state[_COUNT] = count
        spec = view.spec
        name = f"trained {spec.shape} {spec.design} #{count}-{_session_id()[:4]}"
        try:
            loaded = live_train.loaded_from_result(view.result, name)
        except (ValueError, KeyError) as err:
            st.session_state[_TRAINED] = {"error": str(err)[:200]}
            return
        session_models.add_trained(name, loaded)
        session_models.offer(name)
        st.session_state[_TRAINED] = {
            "name": name, "state": view.state, "points": view.points, "init": view.init_loss, "total": spec.steps,
            "weights": bytes(view.result["weights"]), "shape": spec.shape, "design": spec.design,
            "steps_done": view.result.get("steps_done", 0), "seconds": float(view.result.get("seconds", 0.0)),
            "tps": float(view.result.get("tokens_per_second", 0.0)), "device": view.result.get("device", "cpu"),
            "heldout": next((p[4] for p in reversed(view.points) if p[4] is not None), None),
        }
    else:
        st.session_state[_TRAINED] = {"error": view.error or view.state, "cancelled": view.state == live_train.CANCELLED}


def _show_finished(last: dict) -> None:
    if "error" in last:
        st.warning(t("training.live.cancelled" if last.get("cancelled") else "training.live.failed"))
        return
    key = "training.live.done" if last["state"] == live_train.DONE else "training.live.stopped"
    st.success(t(key, name=last["name"], steps=last["steps_done"], seconds=f"{last['seconds']:.1f}",
                 tps=f"{last['tps']:,.0f}"))
    if last["points"]:
        vega(charts.live_loss(last["points"], last["init"], last["total"], text=_live_text()),
             width="stretch", key="training_done_chart")
    if last.get("heldout") is not None and last.get("init"):
        drop = 1 - last["heldout"] / last["init"]
        st.caption(t("training.live.drop", start=f"{last['init']:.2f}", end=f"{last['heldout']:.2f}",
                     drop=f"{100 * drop:.0f}%"))
    selected = state.get(state.MODEL) == last["name"]
    cols = st.columns(2)
    if not selected and last["name"] in session_models.mine():
        if cols[0].button(t("training.live.use", name=last["name"]), key="training_use"):
            state.put(state.MODEL, last["name"])
            st.rerun()
    elif selected:
        cols[0].caption(t("training.replay.viewing", name=last["name"]))
    cols[1].download_button(t("training.live.download"), data=last["weights"],
                            file_name=f"token-journey-{last['shape']}-{last['design']}.safetensors",
                            mime="application/octet-stream", key="training_download", on_click="ignore")

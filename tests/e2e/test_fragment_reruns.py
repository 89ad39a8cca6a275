"""Fragment boundaries on a real server, seen through Streamlit's own protocol (no browser).

AppTest reruns the whole script for every widget, so whether a control reruns only its
section can only be seen on a server: the client (``bench/proto_client.py``) sends the
widget's fragment id, as a browser does, and records which elements come back.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
import json
import random

from bench.classroom import PROMPTS
from bench.proto_client import Session, new_value
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg


def _plain_spec(chart) -> dict:  # noqa: ANN001
    """The chart's spec as the student sees it (a "live" chart's title travels in its data)."""
    spec = json.loads(chart.spec)
    try:
        from ui.charts.live import is_live, resolve_live
    except ImportError:  # no live charts in this tree
        return spec
    if not is_live(spec):
        return spec
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    datasets = {d.name: convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.datasets}
    return resolve_live({**spec, "datasets": datasets})


class RecordingSession(Session):
    """A session that also keeps the chart titles and element kinds of the last run."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.titles: list[str] = []
        self.kinds: list[str] = []
        self.status = ""

    async def rerun(self, fragment_id: str = "", timeout: float = 30):  # noqa: ANN201
        self.titles, self.kinds = [], []
        result = await super().rerun(fragment_id, timeout)
        self.status = result.status
        return result

    def _on_delta(self, fwd: ForwardMsg, exceptions: list[str]) -> None:
        super()._on_delta(fwd, exceptions)
        if fwd.delta.WhichOneof("type") != "new_element":
            return
        element = fwd.delta.new_element
        kind = element.WhichOneof("type")
        self.kinds.append(kind)
        if kind == "markdown" and element.markdown.body.startswith("<svg"):
            self.kinds.append("drawing")  # a diagram laid out on the server (ui.diagram)
        if kind == "vega_lite_chart":
            title = _plain_spec(element.vega_lite_chart).get("title", "")
            title = title.get("text", "") if isinstance(title, dict) else title
            self.titles.append("".join(title) if isinstance(title, list) else str(title))


def _widget(session: Session, key: str):  # noqa: ANN202
    found = [w for w in session.widgets.values() if w.key == key]
    assert found, f"no widget {key!r}: {sorted(w.key for w in session.widgets.values())}"
    return found[0]


def _has(titles: list[str], part: str) -> bool:
    return any(part in title.replace("\n", "") for title in titles)


def test_transformer_block_pickers_rerun_only_their_sections(app_url: str) -> None:
    async def scenario() -> None:
        session = RecordingSession(app_url)
        await session.open(timeout=120)
        result = await session.go_to("transformer_block", timeout=120)
        assert result.ok, result.exceptions
        full = list(session.titles)
        # The page's whole run draws the prompt-only charts, the labs and the picked parts.
        assert _has(full, "Length of the residual stream") and _has(full, "Gradient factor") and _has(full, "Toy router")
        rng = random.Random(0)
        for key in ("tb_layer", "tb_token"):
            picker = _widget(session, key)
            assert picker.fragment_id, f"{key} is not inside a fragment"
            result = await session.set_widget(picker, new_value(session, picker, rng, PROMPTS), timeout=60)
            assert result.ok, result.exceptions
            assert session.status == ForwardMsg.ScriptFinishedStatus.Name(ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
            # What the pickers feed comes back ...
            assert _has(session.titles, "Toy router") and _has(session.titles, "Contributions to the logit")
            assert "drawing" in session.kinds  # the drawing of the chosen layer
            # ... what they do not feed does not: the prompt-only heat map, the ablation and the labs.
            for other in ("Length of the residual stream", "with your change", "Gradient factor", "RMSNorm(x)"):
                assert not _has(session.titles, other), (key, other, session.titles)
        # A control of a part inside the picked sections reruns only that part.
        target = _widget(session, "tb_dla_target")
        assert target.fragment_id and target.fragment_id != _widget(session, "tb_layer").fragment_id
        result = await session.set_widget(target, new_value(session, target, rng, PROMPTS), timeout=60)
        assert result.ok, result.exceptions
        assert _has(session.titles, "Contributions to the logit") and not _has(session.titles, "Toy router")
        await session.close()

    # In its own thread: Playwright's sync API (other e2e tests in the same run) leaves an event
    # loop running in this one, and asyncio.run() refuses to start inside it.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, scenario()).result()


def test_a_click_on_a_section_that_is_gone_is_reported_as_ignored(app_url: str) -> None:
    """Streamlit silently drops a rerun request for a fragment it no longer has: here the merge
    steps' encode box after the corpus box was emptied (the outer section stops before drawing them). The
    bench's client must not wait for an answer that never comes (a 30-minute classroom run once
    counted such a click as a dropped student)."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    async def scenario() -> None:
        session = Session(app_url)
        session.ignored_after = 3.0
        await session.open(timeout=120)
        result = await session.go_to("tokenization", timeout=120)
        assert result.ok, result.exceptions
        step = _widget(session, "tok_encode_word")
        corpus = _widget(session, "tok_corpus")
        assert step.fragment_id and corpus.fragment_id and step.fragment_id != corpus.fragment_id
        empty = WidgetState(id=corpus.id)
        empty.string_value = ""
        result = await session.set_widget(corpus, empty, timeout=60)
        assert result.ok, result.exceptions
        assert not any(w.key == "tok_encode_word" and w.fragment_id != step.fragment_id for w in session.widgets.values())
        click = WidgetState(id=step.id)
        click.string_value = "newest"
        result = await session.set_widget(step, click, timeout=60)  # the stale box, as the bench kept it
        assert result.ignored and result.ok and result.seconds < 10, result
        assert not any(w.fragment_id == step.fragment_id for w in session.widgets.values())
        result = await session.go_to("tokenization", timeout=60)  # the session still works
        assert result.ok, result.exceptions
        await session.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, scenario()).result()

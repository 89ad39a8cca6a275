"""[W3-F] #47 item 2 at the AppTest level: a reconnect to a new server keeps the student's first change.

After a restart (or a failover) the browser's next rerun carries its widgets' values to a new
session that has not drawn those widgets yet: Streamlit holds such values undecoded and runs no
``on_change`` for them. ``ui.state.bind`` must take the browser's value (checked) rather than
write the link's value over it. A new AppTest session that reads the link and then gets the
browser's widget states on the run that first draws the widget is exactly that situation
(tests/e2e/test_reconnect.py does it with a real server restart in Chromium).
"""

from __future__ import annotations

from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP, assert_clean
from ui import state

EMBEDDINGS = "pages/embeddings.py"  # its neighbours slider: a server widget


def _widget_id(page: str, key: str) -> str:
    """The id the browser knows the widget by (the same in every session: key and parameters)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(page).run()
    found = [w.id for w in at._tree.get_widget_states().widgets if w.id.endswith("-" + key)]
    assert found, key
    return found[0]


def _new_session(link: dict[str, str], page: str) -> AppTest:
    """A new server's session: the link is read on its first run, the page not drawn yet."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(link)
    at.run()
    at.switch_page(page)
    return at


def test_a_slider_moved_right_after_a_reconnect_keeps_the_browsers_value() -> None:
    wid = _widget_id(EMBEDDINGS, "embeddings_nn_k")
    at = _new_session({"embeddings_nn_k": "12"}, EMBEDDINGS)
    moved = WidgetState(id=wid)
    moved.double_array_value.data.append(11)  # the student pressed ← once: 12 -> 11
    at._run(WidgetStates(widgets=[moved]))
    assert_clean(at)
    assert at.slider(key="embeddings_nn_k").value == 11
    assert at.session_state[state.durable_key("embeddings_nn_k")] == 11
    assert at.query_params["embeddings_nn_k"] in ("11", ["11"])  # the link follows the student
    assert not at.toast  # a normal move: no "changed page" note


def test_a_crafted_value_on_reconnect_is_still_checked() -> None:
    wid = _widget_id(EMBEDDINGS, "embeddings_nn_k")
    at = _new_session({"embeddings_nn_k": "12"}, EMBEDDINGS)
    crafted = WidgetState(id=wid)
    crafted.double_array_value.data.append(1e9)  # no slider offers it
    at._run(WidgetStates(widgets=[crafted]))
    assert_clean(at)
    # As for a crafted on_change: the default, with the translated note (a toast).
    assert at.slider(key="embeddings_nn_k").value == 10
    assert at.session_state[state.durable_key("embeddings_nn_k")] == 10
    assert at.toast


def test_a_select_changed_right_after_a_reconnect_keeps_the_browsers_choice() -> None:
    """A select sends its option's label: the widget decodes it, and the next call keeps it."""
    wid = _widget_id(EMBEDDINGS, "embeddings_context_preset")
    first = AppTest.from_file(APP, default_timeout=120)
    first.run()
    first.switch_page(EMBEDDINGS).run()
    label = first.selectbox(key="embeddings_context_preset").format_func("coref")
    at = _new_session({}, EMBEDDINGS)
    chosen = WidgetState(id=wid, string_value=label)
    at._run(WidgetStates(widgets=[chosen]))
    assert_clean(at)
    assert at.selectbox(key="embeddings_context_preset").value == "coref"
    at.run()  # any next run (or the next ui.state call in this one) stores it
    assert at.selectbox(key="embeddings_context_preset").value == "coref"
    assert at.session_state[state.durable_key("embeddings_context_preset")] == "coref"
    assert at.query_params["embeddings_context_preset"] in ("coref", ["coref"])

"""[W2-E] Hardening that needs no browser: the classroom profile's flags exist in this Streamlit
and mean what the README says; checkpoint files (require what is read, optional stays optional);
the one escaping helper; messages without server paths; the chart specs' row limit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import core
from core.engine.checkpoint import ASSETS_MODELS, CheckpointCorruptError, CheckpointMissingError, load_checkpoint

ROOT = Path(__file__).resolve().parents[2]


# --- 6. the classroom profile ---------------------------------------------------------------------


def _profile_flags(hosts: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "TOKEN_JOURNEY_ALLOWED_HOSTS"}
    if hosts is not None:
        env["TOKEN_JOURNEY_ALLOWED_HOSTS"] = hosts
    out = subprocess.run(["bash", str(ROOT / "scripts" / "classroom.sh"), "--print-flags"], env=env, cwd=ROOT,
                         capture_output=True, text=True, check=True, timeout=60)
    return out.stdout.split("\n")[:-1]


def _effective_config(flags: list[str]) -> str:
    """``streamlit config show`` with the flags: it refuses an option name this version lacks."""
    out = subprocess.run([sys.executable, "-m", "streamlit", "config", "show", *flags], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_classroom_profile_sets_every_hardened_option_and_the_allowed_hosts() -> None:
    flags = _profile_flags("class.local, 192.168.1.20 class.local")
    config = _effective_config(flags)
    for line in ('showErrorDetails = "none"', 'toolbarMode = "viewer"', 'fileWatcherType = "none"',
                 "runOnSave = false", "enableXsrfProtection = true", "maxUploadSize = 2", "headless = true"):
        assert f"\n{line}\n" in config, line
    hosts = config.split("\nallowedHosts = [", 1)[1].split("]", 1)[0]
    assert [h.strip().strip('",') for h in hosts.strip().splitlines()] == ["class.local", "192.168.1.20"]


def test_classroom_profile_defaults_to_this_machines_names() -> None:
    flags = _profile_flags(None)
    hosts = [flags[i + 1] for i, f in enumerate(flags) if f == "--server.allowedHosts"]
    assert "localhost" in hosts and "127.0.0.1" in hosts and len(hosts) == len(set(hosts))


def test_readme_classroom_recipe_uses_the_profile_and_setup_stays_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    classroom = readme.split("## Running a class", 1)[1].split("\n## ", 1)[0]
    assert "bash scripts/classroom.sh" in classroom and "TOKEN_JOURNEY_ALLOWED_HOSTS" in classroom
    assert "(deploy/README.md)" in classroom  # beyond a LAN: the proxy recipes live there
    deploy = (ROOT / "deploy" / "README.md").read_text(encoding="utf-8")
    beyond = deploy.split("## Beyond a LAN", 1)[1].split("\n## ", 1)[0]
    assert "scripts/classroom.sh --address 127.0.0.1" in beyond
    assert "reverse_proxy" in beyond and "auth_basic" in beyond
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    assert setup.count("```bash") == 2


# --- 9. checkpoint files ---------------------------------------------------------------------------


@pytest.fixture()
def classic_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "classic"
    shutil.copytree(ASSETS_MODELS / "classic", folder)
    return folder


def test_the_file_the_tokenizer_reads_is_the_one_required(classic_copy: Path) -> None:
    (classic_copy / "tokenizer.json").unlink()  # written for Hugging Face; BPETokenizer.load never reads it
    loaded = load_checkpoint(classic_copy, preset="classic")
    assert loaded.tokenizer.vocab_size == loaded.config.vocab_size
    (classic_copy / "bpe.json").unlink()
    with pytest.raises(CheckpointMissingError, match="bpe.json") as missing:
        load_checkpoint(classic_copy, preset="classic")
    assert missing.value.path == classic_copy / "bpe.json" and missing.value.preset == "classic"


def test_a_corrupt_tokenizer_names_its_file(classic_copy: Path) -> None:
    (classic_copy / "bpe.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(CheckpointCorruptError) as corrupt:
        load_checkpoint(classic_copy, preset="classic")
    assert corrupt.value.path == classic_copy / "bpe.json"


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe\x00garbage", b"[1, 2, 3]", b""])
def test_a_corrupt_optional_metrics_file_does_not_disable_the_model(classic_copy: Path, content: bytes) -> None:
    (classic_copy / "metrics.json").write_bytes(content)
    loaded = load_checkpoint(classic_copy, preset="classic")
    assert loaded.metrics == {}
    reference = core.load_builtin("classic")
    ids = reference.tokenizer.encode("法国的首都是")
    np.testing.assert_array_equal(loaded.model.logits(ids), reference.model.logits(ids))
    (classic_copy / "metrics.json").unlink()
    assert load_checkpoint(classic_copy, preset="classic").metrics == {}


def test_checkpoint_messages_are_translated_and_show_paths_inside_the_app_only(classic_copy: Path) -> None:
    from ui.i18n import translate
    from ui.messages import app_relative, checkpoint_message

    assert app_relative(ASSETS_MODELS / "classic" / "bpe.json") == "assets/models/classic/bpe.json"
    assert app_relative(classic_copy / "bpe.json") == "bpe.json"  # outside the app: the name only
    (classic_copy / "model.safetensors").unlink()
    with pytest.raises(CheckpointMissingError) as missing:
        load_checkpoint(classic_copy, preset="classic")
    text = checkpoint_message(missing.value)  # outside a run: the default language
    assert str(classic_copy) not in text and str(ROOT) not in text
    assert text == translate("model.missing.file", "en", file="model.safetensors",
                             command="python -m core.training.train --preset classic")
    assert "`model.safetensors`" in translate("model.missing.file", "zh", file="model.safetensors", command="c")


# --- 10. the escaping helper -----------------------------------------------------------------------


def test_escape_markdown_makes_user_text_literal() -> None:
    from ui.text import escape_markdown

    assert escape_markdown("![](/e.png)") == "\\!\\[\\]\\(/e.png\\)"
    assert escape_markdown("**b** $x$ <img> :red[x] `c`") == "\\*\\*b\\*\\* \\$x\\$ \\<img\\> \\:red\\[x\\] \\`c\\`"
    assert escape_markdown("story.txt 1. # h\nnext") == "story.txt 1\\. \\# h next"
    assert escape_markdown("法国的首都是") == "法国的首都是" and escape_markdown(None) == ""


def test_markdown_table_cells_are_literal_and_rows_must_fit() -> None:
    from ui.text import markdown_table

    table = markdown_table(["x", "a|b"], [[1.5, "![](/e.png)"], ["line\nbreak", "-3"]])
    assert table.splitlines() == ["| x | a\\|b |", "| --- | --- |", "| 1\\.5 | \\!\\[\\]\\(/e.png\\) |",
                                  "| line break | \\-3 |"]
    with pytest.raises(ValueError):
        markdown_table(["x", "y"], [[1]])
    # Row marks wrap each non-empty cell of a row; a user's own stars stay escaped inside them.
    marked = markdown_table(["x", "y"], [["*a*", ""], ["b", "c"]], row_marks=["**", "*"])
    assert marked.splitlines()[2:] == ["| **\\*a\\*** |  |", "| *b* | *c* |"]
    for bad in (["**"], ["***", ""], ["<b>", ""]):
        with pytest.raises(ValueError):
            markdown_table(["x"], [["a"], ["b"]], row_marks=bad)


def test_user_text_in_the_head_grid_is_data_and_its_names_cannot_break_the_label_expression() -> None:
    """The grid's tokens travel as data values (Vega draws them as text); the head and layer
    names sit inside a Vega expression, each written as a JSON string literal, so a quote or a
    backslash in a translation reads as itself."""
    import json

    from ui.charts.attention import head_grid_spec

    names = ['He said "hi"', "back\\slash", "'); alert(1); ('"]
    grid = head_grid_spec(np.full((1, 3, 2, 2), 0.5), ["<i>", "%{x}"], ["a", "b", "c"], title="t", x_title="k",
                          y_title="q", value_title="w", layer_names=["L0"], head_names=names, head_title="h")
    cells = grid["datasets"]["cells"]
    assert set(cells["query"]) == {"<i>", "%{x}"} and set(cells["key"]) == {"<i>", "%{x}"}
    expr = grid["layer"][0]["encoding"]["x"]["axis"]["labelExpr"]
    listed = expr[:expr.rindex("][floor(")] + "]"
    assert json.loads(listed) == names


def test_user_text_in_the_3d_space_goes_as_plain_text() -> None:
    """The 3-D space sends a typed word as it is: the browser writes it with fillText and
    textContent (tests/unit/test_component_bundles.py: no innerHTML in its bundle), so "<b>"
    reads "<b>" and nothing is interpreted."""
    from ui.charts.space3d import SpaceLabels, arrows_space

    labels = SpaceLabels(*"abcdefghi")
    space = arrows_space({"<img src=x onerror=alert(1)>": [1, 0, 0], "%{y}": [0, 1, 0]}, title="<b>t</b>",
                         axes=("x1", "x2", "x3"), space_labels=labels)
    assert [a["name"] for a in space["arrows"]] == ["<img src=x onerror=alert(1)>", "%{y}"]
    assert space["title"] == "<b>t</b>"


# --- 3. charts of any length -----------------------------------------------------------------------


@pytest.mark.parametrize("n", [71, 128, 1024])
def test_attention_charts_build_at_long_sequences(n: int) -> None:
    """71² = 5,041 cells broke Altair's 5,000-row limit; 1,024 is a foreign model's context."""
    import pyarrow as pa

    from ui.charts.attention import attention_heatmap, head_view_chart_spec

    rng = np.random.default_rng(n)
    weights = np.tril(rng.random((n, n)))
    weights /= weights.sum(1, keepdims=True)
    labels = [f"{i}·t" for i in range(n)]
    spec = attention_heatmap(weights, labels, title="t", x_title="k", y_title="q", value_title="w", masked_text="m")
    cells = max(spec["datasets"].values(), key=len)
    assert len(cells) in (n * n, n * (n + 1) // 2)  # every cell, or (long sequences) the visible triangle
    wire = sum(pa.Table.from_pandas(frame).nbytes for frame in spec["datasets"].values())
    assert wire < 12 * 1024 * 1024  # sent as Arrow; the compact form keeps 1,024 positions small
    one = cells[(cells["q"] == n - 1) & (cells["k"] == 1)].iloc[0]
    assert one["value"] == pytest.approx(weights[n - 1, 1], rel=1e-6)
    view = head_view_chart_spec(rng.random((4, n)), labels, n - 1, ["H0", "H1", "H2", "H3"], title="t",
                                weight_title="w", query_side="q", key_side="k", head_title="h")
    assert sum(len(f) for f in view["datasets"].values()) >= 4 * n
    json.dumps({k: v for k, v in spec.items() if k != "datasets"})  # the rest is plain JSON

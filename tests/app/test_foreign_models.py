"""Every page renders on a tiny checkpoint of each foreign family, in both languages.

The checkpoints are random-weight models built by ``tests.hf_fixtures`` (no downloads) and
served through ``ui.resources.add_foreign``, exactly what TOKEN_JOURNEY_MODELS does at start.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.conftest import APP, assert_clean
from tests.hf_fixtures import build_checkpoint

PAGES = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "pages").glob("*.py"))
FAMILIES = ("gpt2", "llama_gqa", "qwen2", "mistral")


@pytest.fixture(scope="module")
def foreign(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from ui import resources

    folders = {}
    for family in FAMILIES:
        folders[family] = build_checkpoint(tmp_path_factory.mktemp(family), family)
        resources.add_foreign(f"tiny-{family}", folders[family])
    return folders


def _open(page: str, lang: str, model: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["lang"] = lang
    at.session_state["model"] = model
    at.session_state["prompt"] = "The capital of France is" if lang == "en" else "法国的首都是"
    at.run()
    at.switch_page(f"pages/{page}.py")
    at.run()
    return at


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("lang", ("en", "zh"))
def test_every_page_renders_on_foreign_model(foreign: dict[str, Path], family: str, lang: str) -> None:
    for page in PAGES:
        at = _open(page, lang, f"tiny-{family}")
        assert_clean(at)
        assert not at.error, (page, [e.value for e in at.error])


def test_sidebar_lists_foreign_models(foreign: dict[str, Path]) -> None:
    from ui import resources, state

    names = state.available_model_names()
    assert names[:2] == ("classic", "modern")
    assert {f"tiny-{f}" for f in FAMILIES} <= set(names)
    assert set(resources.foreign_model_names()) >= {f"tiny-{f}" for f in FAMILIES}


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory, foreign: dict[str, Path]) -> dict[str, str]:
    """Four folders a teacher might name by mistake, each served under its own name."""
    import json
    import shutil

    from ui import resources

    good = foreign["llama_gqa"]
    made: dict[str, str] = {}
    pickle_only = tmp_path_factory.mktemp("bin")
    shutil.copy(good / "config.json", pickle_only / "config.json")
    (pickle_only / "pytorch_model.bin").write_bytes(b"never opened")
    made["bad-bin"] = "bin_only"
    bad_config = tmp_path_factory.mktemp("badconfig")
    shutil.copytree(good, bad_config, dirs_exist_ok=True)
    (bad_config / "config.json").write_text("{ this is not json")
    made["bad-config"] = "bad_config"
    unknown = tmp_path_factory.mktemp("unknown")
    shutil.copytree(good, unknown, dirs_exist_ok=True)
    (unknown / "config.json").write_text(json.dumps({"model_type": "mamba", "architectures": ["MambaForCausalLM"]}))
    made["bad-unknown"] = "unsupported"
    huge = tmp_path_factory.mktemp("huge")
    shutil.copytree(good, huge, dirs_exist_ok=True)
    config = json.loads((good / "config.json").read_text())
    config.update(hidden_size=65536, intermediate_size=262144, num_hidden_layers=400, num_attention_heads=64,
                  num_key_value_heads=8, head_dim=1024)
    (huge / "config.json").write_text(json.dumps(config))
    made["bad-huge"] = "too_big"
    for name, folder in zip(made, (pickle_only, bad_config, unknown, huge)):
        resources.add_foreign(name, folder)
    return made


@pytest.mark.parametrize("lang", ("en", "zh"))
def test_broken_models_get_their_translated_message_and_builtins_keep_working(
        broken: dict[str, str], lang: str) -> None:
    from ui.i18n import translate

    for name, code in broken.items():
        at = _open("generation", lang, name)
        assert not at.exception, [e.value for e in at.exception]
        errors = [e.value for e in at.error]
        assert len(errors) == 1, (name, errors)
        template = translate(f"foreign.error.{code}", lang, name=name, folder="X", reason="X", model_type="mamba",
                             supported="X", needed="X", free="X", params="X", device="X")
        assert errors[0].split("“")[0] == template.split("“")[0], (name, errors[0])
        assert "Traceback" not in errors[0] and "/tmp" not in errors[0]
        assert translate("foreign.builtins_still_work", lang) in [i.value for i in at.info]
    at = _open("generation", lang, "classic")  # the server keeps serving the built-in models
    assert_clean(at)
    assert not at.error

"""Training: watch a built-in model learn (replay of its snapshots) and train a micro-GPT live.

Sections (``ui.training``, each an ``st.fragment``): the loss lesson (cross-entropy =
−ln p(correct)), the replay of a shipped model's training run, and live training in a
separate process with a fair queue.
"""

from __future__ import annotations

import streamlit as st

from ui import training
from ui.i18n import t
from ui.page import setup

ctx = setup(training.PAGE)
st.title(t("training.title"))
st.markdown(t("training.intro"))

training.loss_lesson(ctx.model_name)
training.replay_section(ctx.prompt)
training.live_controls()
training.live_status()

st.subheader(t("training.try.header"))
st.markdown(t("training.try"))

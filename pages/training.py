"""Training: watch a built-in model learn (replay of its snapshots) and train a micro-GPT live.

Sections (``ui.sections.training``, each an ``st.fragment``): the loss lesson (cross-entropy =
−ln p(correct)), the replay of a shipped model's training run, and live training in a
separate process with a fair queue.
"""

from __future__ import annotations

from ui import check_yourself
from ui.page import open_page, try_this
from ui.sections import training

page = open_page(training.PAGE, runs_prompt=False)

training.loss_lesson(page.model_name)
training.replay_section(page.prompt)
training.live_controls()
training.live_status()
try_this("training.try.header", "training.try")
check_yourself.card("training")

"""Example prompts in both languages (the seeds' classics first)."""

from __future__ import annotations

from dataclasses import dataclass

from ui.i18n import translate


@dataclass(frozen=True)
class PromptPreset:
    key: str
    text: str

    def label(self, lang: str) -> str:
        return f"{translate('preset.' + self.key, lang)} — {self.text}"


PROMPT_PRESETS: dict[str, PromptPreset] = {
    p.key: p
    for p in (
        PromptPreset("capital_zh", "法国的首都是"),
        PromptPreset("capital_en", "The capital of France is"),
        PromptPreset("capital_jp_zh", "日本的首都是"),
        PromptPreset("capital_jp_en", "The capital of Japan is"),
        PromptPreset("coref_sweet_zh", "小明把苹果放进书包，因为它太甜了。它指的是"),
        PromptPreset("coref_small_zh", "小明把苹果放进书包，因为它太小了。它指的是"),
        PromptPreset("coref_sweet_en", "Tom put the apple in the bag because it was too sweet. It means the"),
        PromptPreset("coref_small_en", "Tom put the apple in the bag because it was too small. It means the"),
    )
}

"""Example prompts in both languages (the seeds' classics first)."""

from __future__ import annotations

from dataclasses import dataclass

from ui.i18n import t


@dataclass(frozen=True)
class PromptPreset:
    key: str
    text: str

    def label(self) -> str:
        return f"{t('preset.' + self.key)} — {self.text}"


PROMPT_PRESETS: dict[str, PromptPreset] = {
    p.key: p
    for p in (
        PromptPreset("capital_zh", "法国的首都是"),
        PromptPreset("capital_en", "The capital of France is"),
        PromptPreset("capital_jp_zh", "日本的首都是"),
        PromptPreset("capital_jp_en", "The capital of Japan is"),
    )
}

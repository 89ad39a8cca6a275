"""Run axe-core (pinned in tests/e2e/axe/package-lock.json, installed by scripts/test.sh) on a page
that Playwright holds: the main document with its open shadow roots, and every frame.

axe reads the page as a screen reader and a contrast checker would; its script comes from
node_modules (never a CDN) and is injected into each frame separately, so a frame's result does
not depend on cross-frame messaging.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import Frame, Page

AXE_DIR = Path(__file__).resolve().parent / "axe"
AXE_SCRIPT = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
# WCAG 2.1 level A and AA (axe's tags for 2.0 and 2.1 rules; 2.1 adds to 2.0).
WCAG_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")
BLOCKING_IMPACTS = ("critical", "serious")

_RUN = """
async ([include, tags]) => {
  const context = include ? {include: [include]} : document;
  const result = await axe.run(context, {
    runOnly: {type: 'tag', values: tags},
    resultTypes: ['violations', 'incomplete'],
    iframes: false,   // each frame is scanned on its own (axe injected there too)
    elementRef: false,
  });
  // "incomplete": nodes axe could not decide (e.g. text over an image): counted, for a person to look at
  const incomplete = Object.fromEntries(result.incomplete.map((v) => [v.id, v.nodes.length]));
  return {url: result.url, testEngine: result.testEngine.version, incomplete, violations: result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl, tags: v.tags,
    nodes: v.nodes.map((n) => ({target: n.target, html: n.html.slice(0, 300), impact: n.impact,
                                summary: (n.failureSummary || '').slice(0, 400)})),
  }))};
}
"""


def axe_source() -> str:
    if not AXE_SCRIPT.is_file():
        raise FileNotFoundError(
            f"{AXE_SCRIPT} is missing: run `npm ci --prefix tests/e2e/axe` (scripts/test.sh does)")
    return AXE_SCRIPT.read_text(encoding="utf-8")


@dataclass
class Finding:
    """One rule's violations in one place (a page, a state such as an opened tab, a frame)."""

    rule: str
    impact: str
    help: str
    where: str
    nodes: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "impact": self.impact, "help": self.help, "where": self.where,
                "count": len(self.nodes), "nodes": self.nodes}


def _scan_frame(frame: Frame, source: str, include: str | None, where: str) -> list[Finding]:
    if not frame.evaluate("() => typeof window.axe !== 'undefined'"):
        frame.evaluate(source)
    result = frame.evaluate(_RUN, [include, list(WCAG_TAGS)])
    found = [Finding(v["id"], v["impact"] or "", v["help"], where, v["nodes"]) for v in result["violations"]]
    found += [Finding(rule, "incomplete", "axe could not decide: check by eye", where, [{"target": [f"{count} nodes"]}])
              for rule, count in result["incomplete"].items()]
    return found


def scan(page: Page, where: str, include: str | None = None, *, frame_where: str | None = None) -> list[Finding]:
    """axe's WCAG 2.1 A/AA violations on the page (or only inside ``include``, a CSS selector),
    and in every attached child frame (reported under ``frame_where``, default ``where``: a frame
    seen again after a tab change then merges with its first report)."""
    source = axe_source()
    found = _scan_frame(page.main_frame, source, include, where)
    for index, frame in enumerate(f for f in page.frames if f is not page.main_frame):  # nested ones too
        if frame.is_detached():
            continue
        label = f"{frame_where or where} · frame {index} ({frame.name or frame.url[:60]})"
        try:
            found += _scan_frame(frame, source, None, label)
        except Exception as error:  # a frame that navigated away mid-scan: say so, never hide it
            found.append(Finding("frame-not-scanned", "serious", str(error)[:200], label))
    return found


def merge(findings: list[Finding]) -> list[Finding]:
    """One finding per (rule, where), nodes de-duplicated by their target."""
    out: dict[tuple[str, str], Finding] = {}
    for f in findings:
        kept = out.setdefault((f.rule, f.where), Finding(f.rule, f.impact, f.help, f.where))
        seen = {json.dumps(n["target"]) for n in kept.nodes}
        kept.nodes += [n for n in f.nodes if json.dumps(n["target"]) not in seen]
    return list(out.values())

"""User text meeting a renderer that interprets it: Markdown, tables, templates.

Everything a student types (prompts, token names, file names, lab words) or that the model
makes from it (its tokens) is untrusted. Streamlit renders ``st.markdown``/``st.info``/
``st.caption``/``st.subheader`` text as Markdown (``![](/e.png)`` becomes an ``<img>``,
``[x](url)`` a link, ``$…$`` KaTeX, ``:red[…]`` colour). These helpers make such text literal.
(Charts need none: Vega draws its text as text, and the custom components set ``textContent``.)
Pure functions; no Streamlit import needed, but they live in ``ui`` next to the renderers.
"""

from __future__ import annotations

from collections.abc import Sequence

# Every character CommonMark, GitHub-flavoured Markdown, KaTeX ($) or Streamlit's own
# directives (:colour[…], :material/…:) could treat as syntax. A backslash before an ASCII
# punctuation character always means "this character, literally" in CommonMark.
MARKDOWN_SPECIAL = frozenset("\\`*_{}[]()<>#+-!|$~:&")


def escape_markdown(text: object, *, inline: bool = True) -> str:
    """Text shown literally inside Markdown.

    ``inline`` (the default) also turns line breaks into spaces, so user text placed inside
    a sentence cannot start a heading, a list or a code block on a line of its own.
    Example: escape_markdown("![](/e.png)") -> "\\!\\[\\]\\(/e.png\\)"
    """
    value = "" if text is None else str(text)
    if inline:
        value = value.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    out = []
    for i, ch in enumerate(value):
        # "." is syntax only after a number ("1." starts a list): "story.txt" stays as typed.
        special = ch in MARKDOWN_SPECIAL or (ch == "." and i > 0 and value[i - 1].isdigit())
        out.append("\\" + ch if special else ch)
    return "".join(out)


def markdown_table(header: Sequence[object], rows: Sequence[Sequence[object]],
                   row_marks: Sequence[str] | None = None) -> str:
    """A GitHub-flavoured Markdown table whose every cell is shown literally.

    For small tables (textbook numbers, comparisons, a page's short lists): one Markdown string
    costs the server a fraction of what ``st.dataframe`` does (no Arrow conversion on every
    rerun), and the browser no data-grid module (~1.2 MB of JavaScript on a page's first visit).
    ``row_marks`` ("" / "**" bold / "*" italic, one per row) emphasise whole rows.
    Example: markdown_table(["x", "y"], [[1, "a|b"]]) -> "| x | y |\\n| --- | --- |\\n| 1 | a\\\\|b |"
    """
    if any(len(row) != len(header) for row in rows):
        raise ValueError("every row needs one cell per column")
    marks = list(row_marks) if row_marks is not None else [""] * len(rows)
    if len(marks) != len(rows) or any(mark not in ("", "*", "**") for mark in marks):
        raise ValueError("one mark per row: '', '*' or '**'")

    def cell(value: object, mark: str) -> str:
        text = escape_markdown(value)
        return f"{mark}{text}{mark}" if mark and text else text  # "****" would show as stars

    lines = ["| " + " | ".join(escape_markdown(c) for c in header) + " |",
             "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(cell(c, mark) for c in row) + " |" for row, mark in zip(rows, marks)]
    return "\n".join(lines)

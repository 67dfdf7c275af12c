"""Turn selected blocks into readable text: headings, list items, table rows."""

from __future__ import annotations

from tokenslim.html._blocks import Block

__all__ = ["render"]


def render(blocks: list[Block], *, keep_tables: bool = True) -> str:
    """Join blocks into text, one block a line.

    Headings become ``## Heading`` (markdown level), list items ``- item``, and the
    cells of one table row ``a | b | c``.

    Args:
        blocks: Blocks in document order.
        keep_tables: When false, table cells are dropped.

    Returns:
        The text (no trailing newline).
    """
    lines: list[str] = []
    row = -2
    for b in blocks:
        kind = b.kind
        if kind == "cell":
            if not keep_tables:
                continue
            if b.row == row and lines:
                lines[-1] += " | " + b.text
            else:
                lines.append(b.text)
            row = b.row
            continue
        row = -2
        if kind[0] == "h" and len(kind) == 2:
            lines.append("#" * int(kind[1]) + " " + b.text)
        elif kind == "li":
            lines.append("- " + b.text)
        else:
            lines.append(b.text)
    return "\n".join(lines)

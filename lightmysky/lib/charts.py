"""Bar charts drawn on the server as SVG, so they need no script: where each bar stands."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

BASELINE = 112  # the bars stand on this line of a 420 x 160 chart; labels go below it
TALLEST = 96


@dataclass(frozen=True)
class Bar:
    label: datetime  # the day or week the bar counts
    count: int
    x: int
    width: int
    height: int

    @property
    def middle(self) -> float:
        return self.x + self.width / 2

    @property
    def y(self) -> int:
        return BASELINE - self.height


def bars(counts: list[tuple[datetime, int]], *, left: int, step: int, width: int) -> list[Bar]:
    """One bar per (label, count), `step` apart from `left`; the busiest is TALLEST high."""
    busiest = max([count for _, count in counts] + [1])
    return [
        Bar(
            label=label,
            count=count,
            x=left + step * index,
            width=width,
            height=round(TALLEST * count / busiest) if count else 0,
        )
        for index, (label, count) in enumerate(counts)
    ]

"""Time windows: a closed range of dates with what it stands for (pre/post event, stated explicitly)."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel


class TimeWindow(BaseModel):
    start: date
    end: date
    label: str = ""  # "pre", "post", "explicit"

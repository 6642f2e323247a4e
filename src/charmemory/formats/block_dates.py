"""The `date` attribute of a memory block: written as ``YYYY-MM-DD HH:MM`` in local time,
read leniently (ISO 8601, date-only forms and the US style older files used)."""

from __future__ import annotations

from datetime import datetime

_DATE_FORMATS = ("%m/%d/%Y, %I:%M:%S %p", "%m/%d/%Y %H:%M", "%Y/%m/%d %H:%M", "%Y/%m/%d")


def format_block_date(moment: datetime) -> str:
    """``YYYY-MM-DD HH:MM`` in local time, as new blocks carry it."""
    local = moment.astimezone() if moment.tzinfo is not None else moment
    return f"{local.year:04d}-{local.month:02d}-{local.day:02d} {local.hour:02d}:{local.minute:02d}"


def parse_block_date(value: str) -> datetime | None:
    """Read a block date leniently; a naive local datetime, or None when unreadable.

    Accepts ``YYYY-MM-DD HH:MM``, ISO 8601 (offsets are converted to local time),
    date-only forms and the US style older files used.
    """
    moment = _read_date(value.strip())
    if moment is not None and moment.tzinfo is not None:
        moment = moment.astimezone().replace(tzinfo=None)
    return moment


def _read_date(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        pass
    for pattern in _DATE_FORMATS:
        try:
            return datetime.strptime(value, pattern)
        except ValueError:
            continue
    return None

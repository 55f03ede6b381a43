"""The ``<id:...>`` path converter: a database id (or seat number) in a URL.

Django's ``<int:...>`` takes any run of digits, and a number past 64 bits reached
the database (a 500 on SQLite: "Python int too large to convert"). ``<id:...>``
takes 0 .. 2^63-1; a longer number matches no URL, so it is a 404 like any
other id that names nothing.
"""

from __future__ import annotations

from ladder.common.fields import MAX_ID


class IdConverter:
    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > MAX_ID:
            raise ValueError("beyond 64 bits")  # Django: no match (404)
        return number

    def to_url(self, value: int) -> str:
        return str(value)

"""Django's PBKDF2 password hasher, counting how often it hashes (tests only).

Lets a test prove that a refused login attempt cost no password hash, without
timing anything. Fewer iterations than production keep the suite fast.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class CountingPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    iterations = 1000
    hashed = 0  # password hashes computed in this process (verify hashes too)

    def encode(self, password: str, salt: str, iterations: int | None = None) -> Any:
        type(self).hashed += 1
        return super().encode(password, salt, iterations)


class FastPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    """The production hash with 1,000 iterations instead of a million (0.2 s of CPU each).

    Its hashes are ``pbkdf2_sha256$1000$...``: a server process of a test, which keeps
    Django's default hasher, verifies them as they are (the iterations are stored).
    """

    iterations = 1000

"""Allocate 4 GB, at start and during the game."""

from probe import attempt, serve

attempt("allocate 4 GB", lambda: len(bytearray(4 * 1024**3)))


def act(observation, legal):
    attempt("allocate 4 GB in act", lambda: len(bytearray(4 * 1024**3)))
    return 0


serve(act)

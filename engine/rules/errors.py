"""Errors the rules library raises."""


class IllegalAction(ValueError):
    """An action that is not legal now; the message says why. The state is unchanged."""


class MalformedAction(IllegalAction):
    """An action that names no kind of the rules or has the wrong arguments."""


class GameOver(IllegalAction):
    """The game has ended; nothing more can be applied."""

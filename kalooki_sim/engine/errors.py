"""Errors raised by the Python layer of the engine."""

from __future__ import annotations

from .layout import ERROR_TEXT


class IllegalActionError(ValueError):
    """An action that the rules do not allow in this position.

    ``action`` is the action (id or text as given), ``code`` the engine's ``E_*`` code and
    ``reason`` its explanation.  The game state is left unchanged.
    """

    def __init__(self, action, code: int, reason: str | None = None, text: str | None = None):
        self.action = action
        self.code = int(code)
        self.reason = reason if reason is not None else ERROR_TEXT.get(self.code, f"error {code}")
        label = f"{text!r} (id {action})" if text is not None and text != action else repr(action)
        super().__init__(f"illegal action {label}: {self.reason}")

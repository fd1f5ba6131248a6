"""Domain refusals: values with a stable code, never exceptions."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Refusal:
    """An event the rules do not accept; the state it was applied to is unchanged.

    ``code`` is stable (scripts and tests match on it); ``message`` is for people.
    """

    code: str
    message: str

    def as_dict(self) -> dict[str, str]:
        """The refusal as a JSON-ready mapping."""
        return {"code": self.code, "message": self.message}

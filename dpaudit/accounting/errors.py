"""The error an accountant raises when it cannot account for an event."""

from __future__ import annotations

from collections.abc import Sequence

import dp_accounting

__all__ = ["UnsupportedEventError"]


class UnsupportedEventError(dp_accounting.UnsupportedEventError, ValueError):
    """An accountant cannot account for (a leaf of) an event tree: both dp-accounting's error of
    that name (code written against dp-accounting's accountants catches it) and a ValueError.

    Raised before anything is computed or any state changes. `event` is the offending leaf,
    `accountant` the name that refused it, `supported_by` the accountants that can account
    for the whole tree (possibly empty).

    Examples
    --------
    >>> import dp_accounting, dpaudit
    >>> try:
    ...     dpaudit.epsilon(dp_accounting.GaussianDpEvent(1.0), 1e-5, accountant="pure")
    ... except dpaudit.UnsupportedEventError as err:
    ...     print(f"{err.accountant}: {err.reason}; supported by {', '.join(err.supported_by)}")
    pure: it is not pure DP; supported by approx, rdp, zcdp, pld
    """

    def __init__(self, accountant: str, event: object, reason: str, supported_by: Sequence[str] = ()) -> None:
        self.accountant = accountant
        self.event = event
        self.reason = reason
        self.supported_by = tuple(supported_by)
        can = ", ".join(self.supported_by) if self.supported_by else "none of dpaudit's accountants"
        super().__init__(
            f"accountant {accountant!r} cannot account for event {event!r}: {reason}; "
            f"accountants that can account for this event tree: {can}"
        )

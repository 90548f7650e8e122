"""The verihub exception tree. Every message says what went wrong and what to do next.

::

    VerihubError
    ├── UsageError                 bad input from the user (flags, files, ids)
    │   ├── UnknownEnvironmentError
    │   ├── UnknownSplitError
    │   └── RunDirError            a --resume/--out directory that cannot be used
    ├── RunInterrupted             Ctrl-C during a run (finished rollouts are saved)
    ├── EnvironmentDefinitionError an environment package is malformed
    └── ModelError                 the model endpoint failed (after retries)
        ├── ModelUnreachableError  nothing answers at the URL
        └── ModelConfigError       the endpoint refuses every request (key, model, path)
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "EnvironmentDefinitionError",
    "ModelConfigError",
    "ModelError",
    "ModelUnreachableError",
    "RunDirError",
    "RunInterrupted",
    "UnknownEnvironmentError",
    "UnknownSplitError",
    "UsageError",
    "VerihubError",
]


class VerihubError(Exception):
    """Base of every error verihub raises on purpose."""


class UsageError(VerihubError):
    """The user asked for something that cannot be done as asked."""


class UnknownEnvironmentError(UsageError):
    """No installed environment has this id."""

    def __init__(self, env_id: str, *, close: Sequence[str] = (), installable: str | None = None) -> None:
        msg = f"no installed environment {env_id!r}."
        if close:
            msg += " Did you mean " + ", ".join(repr(c) for c in close) + "?"
        if installable:
            msg += f" Install it with `{installable}`."
        msg += " See `verihub list` for what is installed."
        super().__init__(msg)
        self.env_id = env_id


class UnknownSplitError(UsageError):
    def __init__(self, split: str, available: Sequence[str]) -> None:
        super().__init__(f"unknown split {split!r}; this environment has: {', '.join(available)}")


class RunDirError(UsageError):
    """A run directory that is malformed, foreign, or would be overwritten."""


class RunInterrupted(VerihubError):
    """The user interrupted a run; what finished is on disk and can be resumed."""


class EnvironmentDefinitionError(VerihubError):
    """An environment is defined wrongly (duplicate ids, bad limits, bad entry point)."""


class ModelError(VerihubError):
    """A model request failed for good (after the retries)."""


class ModelUnreachableError(ModelError):
    """The model endpoint cannot be reached at all."""


class ModelConfigError(ModelError):
    """The endpoint answers but refuses the request (401/403/404...): every rollout would fail
    the same way, so the run stops instead of recording the same error N times."""

"""Python checks named by rubric.yaml (``kind: function``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from graders.total import BrokenReference

__all__ = ["mentions_keyword"]


def mentions_keyword(response: str, *, reference: Any) -> bool:
    """True when the task's keyword occurs in ``response`` as a whole word (any case).

    ``reference`` is the task's answer, a mapping with a ``keyword``; anything else raises
    :class:`~graders.total.BrokenReference`, which the rubric records as a check error (a broken
    task is not a wrong answer).
    """
    if not isinstance(reference, Mapping) or not isinstance(reference.get("keyword"), str):
        raise BrokenReference("the task reference needs a 'keyword' string")
    keyword = reference["keyword"].strip()
    if not keyword:
        raise BrokenReference("the task keyword is empty")
    return re.search(rf"(?<!\w){re.escape(keyword)}(?!\w)", response, re.IGNORECASE) is not None

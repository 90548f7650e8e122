"""The automatic reviewer behind ``verihub check`` (see :mod:`hub.review.check.runner`).

::

    report = check("environments/myenv")        # a package folder or an installed id
    print(report.to_text()); report.passed
"""

from hub.review.check.report import CHECK_NAMES, CheckReport, CheckResult
from hub.review.check.runner import CheckOptions, check
from hub.review.check.sandbox import Limits

__all__ = ["CHECK_NAMES", "CheckOptions", "CheckReport", "CheckResult", "Limits", "check"]

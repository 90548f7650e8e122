"""The automatic reviewer behind ``verihub check`` (see :mod:`hub.review.check.runner`).

::

    report = check("environments/myenv")        # a package folder, a .whl or an installed id
    print(report.to_text()); report.passed

The package's code runs only in the bubblewrap sandbox (:mod:`hub.sandbox`); every verdict is
drawn here from its answers (:mod:`hub.review.check.drive`). ``run_check`` is the same entry
point for the hub server's review of pushed versions.
"""

from hub.review.check.report import CHECK_NAMES, CheckReport, CheckResult
from hub.review.check.runner import CheckOptions, check, run_check
from hub.sandbox import Limits

__all__ = ["CHECK_NAMES", "CheckOptions", "CheckReport", "CheckResult", "Limits", "check", "run_check"]

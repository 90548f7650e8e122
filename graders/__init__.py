"""verihub graders: answer checking usable on its own, as a reward function.

This package never imports ``hub``. Subpackages are imported on demand (``graders.math``,
``graders.qa``, ...); this top level only carries the shared record types.
"""

from graders.grade import Check, Grade, GradeStatus
from graders.protocol import Grader

__all__ = ["Check", "Grade", "GradeStatus", "Grader"]

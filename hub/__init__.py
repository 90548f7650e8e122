"""verihub: a lightweight hub of verifier-based environments for LLM evaluation and RL.

The public surface is re-exported here; submodules are private unless documented.
"""

from graders.grade import Check, Grade, GradeStatus
from graders.protocol import Grader
from hub.environment import Environment, GradedEnv, MultiTurnEnv, SingleTurnEnv, TaskSource
from hub.errors import (
    EnvironmentDefinitionError,
    ModelError,
    RunDirError,
    UnknownEnvironmentError,
    UsageError,
    VerihubError,
)
from hub.pooled import PooledGrade
from hub.tools import Tool, ToolEnv, tool_schema
from hub.types import Message, Rollout, RolloutError, State, Step, Task, Timing, ToolCall, Usage

__version__ = "0.1.0"

__all__ = [
    "Check",
    "Environment",
    "EnvironmentDefinitionError",
    "Grade",
    "GradeStatus",
    "GradedEnv",
    "Grader",
    "Message",
    "ModelError",
    "MultiTurnEnv",
    "PooledGrade",
    "Rollout",
    "RolloutError",
    "RunDirError",
    "SingleTurnEnv",
    "State",
    "Step",
    "Task",
    "TaskSource",
    "Tool",
    "ToolEnv",
    "Timing",
    "ToolCall",
    "UnknownEnvironmentError",
    "Usage",
    "UsageError",
    "VerihubError",
    "__version__",
    "tool_schema",
]

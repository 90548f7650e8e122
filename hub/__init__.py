"""verihub: a lightweight hub of verifier-based environments for LLM evaluation and RL.

The public surface is re-exported here. The package is one subpackage per concept, imports
flowing one way (see docs/architecture.md): :mod:`hub.env` (the environment API), :mod:`hub.registry`
(finding and installing environments), :mod:`hub.run` (models, the runner, run records),
:mod:`hub.train` (RL and other libraries), :mod:`hub.review` (authoring and the automatic reviewer),
:mod:`hub.server` (the hub server) and :mod:`hub.cli` (the command line, the top layer).
"""

from graders.grade import Check, Grade, GradeStatus
from graders.protocol import Grader
from hub.env import (
    Axis,
    DifficultySpace,
    Environment,
    EnvironmentDefinitionError,
    GradedEnv,
    Message,
    ModelError,
    MultiTurnEnv,
    PooledGrade,
    Rollout,
    RolloutError,
    RunDirError,
    SingleTurnEnv,
    State,
    Step,
    Task,
    TaskSource,
    Timing,
    Tool,
    ToolCall,
    ToolEnv,
    UnknownEnvironmentError,
    Usage,
    UsageError,
    VerihubError,
    tool_schema,
)
from hub.version import __version__

__all__ = [
    "Axis",
    "Check",
    "DifficultySpace",
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

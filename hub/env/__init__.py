"""The environment API: everything an environment author touches.

Reading guide:

- :mod:`hub.env.types`: the records (``Task``, ``Message``, ``State``, ``Step``, ``Rollout``, ...).
- :mod:`hub.env.environment`: ``Environment`` and its subclasses ``SingleTurnEnv``,
  ``MultiTurnEnv``, ``GradedEnv`` (start here; its docstring is the guide to writing one).
- :mod:`hub.env.tools`: ``ToolEnv`` and typed Python functions as OpenAI tools.
- :mod:`hub.env.state`: per-rollout SQLite state (``SeedDatabase``, ``RolloutDatabase``, snapshots).
- :mod:`hub.env.stateful`: ``StatefulToolEnv``, tools on a rollout's own database.
- :mod:`hub.env.state_grading`: a stateful task's requirements and grading against them.
- :mod:`hub.env.mcp_serve`: a tool environment's tools over MCP stdio (``verihub mcp-serve``).
- :mod:`hub.env.mcp_tools`: ``McpToolEnv``, tools from an MCP server started per rollout.
- :mod:`hub.env.pooled`: ``PooledGrade``, synchronous grading in a worker pool with a hard timeout.
- :mod:`hub.env.grading`: grading one rollout under a time limit, choosing a split's tasks.
- :mod:`hub.env.procedural`: building blocks for procedural task generators.
- :mod:`hub.env.difficulty`: difficulty spaces (named axes with ordered levels) an environment declares.
- :mod:`hub.env.errors`: verihub's exception tree (every room raises these).
- :mod:`hub.env.aio`: running verihub's event loop (uvloop where installed).

Imports: ``graders`` and the standard library only; every other room of ``hub`` builds on this one.
"""

from typing import TYPE_CHECKING

from hub._lazy import surface
from hub.env.difficulty import (
    POINT_KEY,
    Axis,
    DifficultySpace,
    Level,
    OutcomeObserver,
    Point,
    wilson_interval,
)
from hub.env.environment import Environment, GradedEnv, MultiTurnEnv, PointSource, SingleTurnEnv, TaskSource
from hub.env.errors import (
    EnvironmentDefinitionError,
    EnvironmentGoneError,
    ModelConfigError,
    ModelError,
    ModelUnreachableError,
    RunDirError,
    RunInterrupted,
    UnknownEnvironmentError,
    UnknownSplitError,
    UsageError,
    VerihubError,
)
from hub.env.grading import TaskSelection, grade_rollout, one_line, select_tasks, with_grade, with_metrics
from hub.env.pooled import PooledGrade
from hub.env.state import RolloutDatabase, SeedDatabase
from hub.env.state_grading import Action, StateRequirements, gold_messages, requirements_of
from hub.env.stateful import StatefulToolEnv
from hub.env.tools import MAX_CALLS_PER_TURN, Tool, ToolEnv, tool_schema
from hub.env.types import (
    Message,
    Rollout,
    RolloutError,
    Sampling,
    State,
    Step,
    Task,
    Timing,
    ToolCall,
    Usage,
    final_answer,
    scrub_surrogates,
)

if TYPE_CHECKING:  # read when first used (PEP 562): the surface of the modules not loaded above
    from hub.env.mcp_serve import serve_stdio
    from hub.env.procedural import SPLITS, split_of, stream_key
    from hub.env.provenance import record_source, recording_sources, rows_sha256

__all__ = [
    "Action",
    "Axis",
    "DifficultySpace",
    "Environment",
    "EnvironmentDefinitionError",
    "EnvironmentGoneError",
    "GradedEnv",
    "Level",
    "MAX_CALLS_PER_TURN",
    "Message",
    "ModelConfigError",
    "ModelError",
    "ModelUnreachableError",
    "MultiTurnEnv",
    "OutcomeObserver",
    "POINT_KEY",
    "Point",
    "PointSource",
    "PooledGrade",
    "Rollout",
    "RolloutDatabase",
    "RolloutError",
    "RunDirError",
    "RunInterrupted",
    "SPLITS",
    "Sampling",
    "SeedDatabase",
    "SingleTurnEnv",
    "State",
    "StateRequirements",
    "StatefulToolEnv",
    "Step",
    "Task",
    "TaskSelection",
    "TaskSource",
    "Timing",
    "Tool",
    "ToolCall",
    "ToolEnv",
    "UnknownEnvironmentError",
    "UnknownSplitError",
    "Usage",
    "UsageError",
    "VerihubError",
    "final_answer",
    "gold_messages",
    "grade_rollout",
    "one_line",
    "record_source",
    "recording_sources",
    "requirements_of",
    "rows_sha256",
    "scrub_surrogates",
    "select_tasks",
    "serve_stdio",
    "split_of",
    "stream_key",
    "tool_schema",
    "wilson_interval",
    "with_grade",
    "with_metrics",
]

__getattr__, __dir__ = surface(
    __name__,
    {
        "SPLITS": "hub.env.procedural",
        "record_source": "hub.env.provenance",
        "recording_sources": "hub.env.provenance",
        "rows_sha256": "hub.env.provenance",
        "serve_stdio": "hub.env.mcp_serve",
        "split_of": "hub.env.procedural",
        "stream_key": "hub.env.procedural",
    },
)

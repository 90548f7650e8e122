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

from hub.env.difficulty import Axis, DifficultySpace
from hub.env.environment import Environment, GradedEnv, MultiTurnEnv, PointSource, SingleTurnEnv, TaskSource
from hub.env.errors import (
    EnvironmentDefinitionError,
    ModelError,
    RunDirError,
    UnknownEnvironmentError,
    UsageError,
    VerihubError,
)
from hub.env.grading import grade_rollout, select_tasks
from hub.env.pooled import PooledGrade
from hub.env.state import RolloutDatabase, SeedDatabase
from hub.env.state_grading import Action, StateRequirements
from hub.env.stateful import StatefulToolEnv
from hub.env.tools import Tool, ToolEnv, tool_schema
from hub.env.types import Message, Rollout, RolloutError, Sampling, State, Step, Task, Timing, ToolCall, Usage

__all__ = [
    "Action",
    "Axis",
    "DifficultySpace",
    "Environment",
    "EnvironmentDefinitionError",
    "GradedEnv",
    "Message",
    "ModelError",
    "MultiTurnEnv",
    "PointSource",
    "PooledGrade",
    "Rollout",
    "RolloutDatabase",
    "RolloutError",
    "RunDirError",
    "Sampling",
    "SeedDatabase",
    "SingleTurnEnv",
    "State",
    "StateRequirements",
    "StatefulToolEnv",
    "Step",
    "Task",
    "TaskSource",
    "Timing",
    "Tool",
    "ToolCall",
    "ToolEnv",
    "UnknownEnvironmentError",
    "Usage",
    "UsageError",
    "VerihubError",
    "grade_rollout",
    "select_tasks",
    "tool_schema",
]

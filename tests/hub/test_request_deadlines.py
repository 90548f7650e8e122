"""Request time limits kept by one sweeping timer: a request past its deadline times out, a
cancel from anyone else always wins, and the task's cancel count is left as it was found."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterator

import pytest

from hub.env.types import Sampling
from hub.run.client import ClientOptions, OpenAIClient
from hub.run.deadlines import SWEPT, RequestDeadlines

pytestmark = pytest.mark.skipif(not SWEPT, reason="deadlines are swept on Python 3.11+ only")

_Outcome = str


@contextlib.contextmanager
def swept(timeout_s: float) -> Iterator[tuple[RequestDeadlines, asyncio.Future[None]]]:
    """Started deadlines (stopped after) and a future a request can wait on as on a server."""
    deadlines = RequestDeadlines(timeout_s)
    deadlines.start()
    try:
        yield deadlines, asyncio.get_running_loop().create_future()
    finally:
        deadlines.stop()


async def _request(deadlines: RequestDeadlines, gate: asyncio.Future[None]) -> _Outcome:
    """What the client does around one request, waiting on ``gate`` as if on the server."""
    task = deadlines.enter()
    try:
        await gate
    except asyncio.CancelledError:
        if not deadlines.timed_out(task):
            raise
        return "timed out"
    finally:
        deadlines.leave(task)
    return "answered"


async def _cancelling(task: asyncio.Task[object]) -> int:
    if sys.version_info >= (3, 11):
        return task.cancelling()
    return 0  # pragma: no cover


async def test_a_request_past_its_deadline_times_out_and_leaves_no_cancel_behind() -> None:
    with swept(0.05) as (deadlines, gate):
        outcome = await _request(deadlines, gate)
        assert outcome == "timed out"
        me = asyncio.current_task()
        assert me is not None
        assert await _cancelling(me) == 0
        await asyncio.sleep(0.1)  # the same task awaits again: nothing is still pending for it


async def test_an_answer_in_time_is_untouched() -> None:
    with swept(5.0) as (deadlines, gate):
        asyncio.get_running_loop().call_later(0.01, gate.set_result, None)
        assert await _request(deadlines, gate) == "answered"
        assert not deadlines._due and not deadlines._cancelled


@pytest.mark.parametrize("order", ["outside first", "sweep first"])
async def test_a_cancel_from_outside_is_never_taken_for_a_timeout(order: str) -> None:
    """The sweep and the task's owner cancel in the same turn of the loop, either way round: the
    task must end cancelled, not go on as if its request had only timed out."""
    with swept(3600.0) as (deadlines, gate):
        task = asyncio.ensure_future(_request(deadlines, gate))
        await asyncio.sleep(0)  # the request is in flight
        deadlines._due[task] = 0.0  # past its deadline
        if order == "outside first":
            task.cancel()
            deadlines._sweep()
        else:
            deadlines._sweep()
            task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert task.cancelled()
        assert not deadlines._due and not deadlines._cancelled


async def test_a_sweep_cancels_each_late_request_once() -> None:
    with swept(3600.0) as (deadlines, gate):
        task = asyncio.ensure_future(_request(deadlines, gate))
        await asyncio.sleep(0)
        deadlines._due[task] = 0.0
        deadlines._sweep()
        deadlines._sweep()  # again before the task has run: not a second cancel
        assert await task == "timed out"
        assert await _cancelling(task) == 0


async def test_a_stopped_sweep_schedules_nothing() -> None:
    deadlines = RequestDeadlines(0.02)
    deadlines.start()
    deadlines.stop()
    assert deadlines._timer is None
    await asyncio.sleep(0.05)
    assert deadlines._timer is None


async def test_a_server_that_never_answers_times_out_through_the_client() -> None:
    """End to end on loopback: a server that takes the request and says nothing."""

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1 << 16)
        await asyncio.sleep(30)

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    options = ClientOptions(base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout_s=0.2, max_retries=0)
    try:
        async with OpenAIClient(options) as client:
            loop = asyncio.get_running_loop()
            started = loop.time()
            from hub.env import Message, ModelError

            with pytest.raises(ModelError, match="timed out"):
                await client.chat([Message(role="user", content="hi")], sampling=Sampling())
            assert loop.time() - started < 5.0  # 0.2 s and at most a quarter more, with room for load
            me = asyncio.current_task()
            assert me is not None and await _cancelling(me) == 0
    finally:
        server.close()


async def test_a_cancel_swallowed_inside_the_request_is_still_taken_back() -> None:
    """A library under the request may turn the cancel into its own error: leaving the request
    takes the sweep's cancel back all the same, so the task's later waits are not cancelled."""
    with swept(3600.0) as (deadlines, gate):

        async def request() -> str:
            task = deadlines.enter()
            try:
                try:
                    await gate
                except asyncio.CancelledError:
                    return "converted by the library"
            finally:
                deadlines.leave(task)
            return "answered"

        task = asyncio.ensure_future(request())
        await asyncio.sleep(0)
        deadlines._due[task] = 0.0
        deadlines._sweep()
        assert await task == "converted by the library"
        assert await _cancelling(task) == 0


async def test_starting_twice_keeps_one_timer() -> None:
    deadlines = RequestDeadlines(0.02)
    deadlines.start()
    first = deadlines._timer
    deadlines.start()
    assert first is not None and first.cancelled()
    deadlines.stop()

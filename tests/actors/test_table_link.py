"""The data plane served by the table core itself, over real loopback sockets and a real
redis-server, without Ray: the actor hands its `LinkServer` the core (`TableActor._listen`), so
this is the path every gateway's command and event takes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from actors.codec import (
    MAX_LINE,
    decode,
    encode,
)
from actors.link_messages import Answer, Bye, Call, Follow, Gone, Hello, Message, Welcome
from actors.link_server import LinkServer
from actors.protocol import Act, Batch, Outcome
from actors.table_core import TableCore

CODE = "LINK"
SECRET = "s3cret"
INCARNATION = "inc-1"


class Gateway:
    """A gateway's end of one link, as bare as the protocol allows."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int, name: str) -> Gateway:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=MAX_LINE)
        gw = cls(reader, writer)
        gw.send(Hello(SECRET, name, CODE, INCARNATION))
        assert isinstance(await gw.read(), Welcome)
        return gw

    def send(self, msg: Message) -> None:
        self.writer.write(encode(msg))

    async def read(self) -> Message:
        async with asyncio.timeout(10):
            return decode(await self.reader.readline())

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


async def until(ok: Callable[[], bool], what: str) -> None:
    for _ in range(500):  # 5 s at most
        if ok():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never true: {what}")


def task_names(core: TableCore) -> list[str]:
    return sorted(t.get_name().split(":")[-1] for t in core.tasks.running())


async def test_commands_and_events_travel_the_link_to_the_core(redis_url: str) -> None:
    async def end() -> None:  # what TableActor._end does, without the ray.kill
        await server.close()

    core = TableCore("T-link", redis_url, on_stop=end)
    server = LinkServer(core, SECRET, INCARNATION, silence_s=20.0)
    await core.open(CODE, {"players": 4}, "p0", "Ann", (600.0, 600.0))
    port = await server.start("127.0.0.1", (0, 0))
    a = await Gateway.open(port, "gwA")
    b = await Gateway.open(port, "gwB")
    try:
        a.send(Follow(core.feed.seq))
        first = await a.read()
        assert isinstance(first, Batch)
        assert first.events == ()
        # B's command: its events come back in B's answer, and reach A through A's stream.
        b.send(Call(1, Act.of("c-1", "gwB", "p0", "add_bot", {"seat": 1})))
        answer = await b.read()
        assert isinstance(answer, Answer)
        assert answer.rid == 1
        assert isinstance(answer.reply, Outcome)
        assert answer.reply.ok
        pushed = await a.read()
        assert isinstance(pushed, Batch)
        assert [e.seq for e in pushed.events] == [e.seq for e in answer.reply.events]
        assert core.feed.published == core.feed.seq

        # A says goodbye: nothing to wait for. B's link breaks: its lease's grace starts.
        a.send(Bye())
        await a.close()
        await until(lambda: server.links == 1, "A's link ended")
        assert "gone-check" not in task_names(core)
        await b.close()
        await until(lambda: "gone-check" in task_names(core), "B's grace started")

        # A new follower is told `Gone` when the table stops, and the grace goes with it.
        c = await Gateway.open(port, "gwC")
        c.send(Follow(-1))
        assert isinstance(await c.read(), Batch)
        await core.stop()
        assert isinstance(await c.read(), Gone)
        await c.close()
        assert core.tasks.running() == []
    finally:
        await server.close()
        for gw in (a, b):
            gw.writer.close()

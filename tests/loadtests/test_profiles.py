"""The py-spy summary reads threads apart (`--threads`), so a ramp's profile tells the event
loop's time from its worker threads'."""

from collections import Counter

from loadtests.profiles import summarise, thread_label


def test_threads_are_grouped_by_name() -> None:
    loop = ("thread (0x1): MainThread", "main (cluster/__main__.py:1)", "Runner.run (x)")
    task = ("thread (0x1): MainThread", "_reader (gateway/ws.py:288)")
    anyio = ("thread (0x2): AnyIO worker thread", "_bootstrap (threading.py:1)")
    unnamed = ("thread (0x3)", "deserialize_objects (ray/x.py:1)")
    assert thread_label(loop) == thread_label(task) == "MainThread"
    assert thread_label(anyio) == "AnyIO worker thread"
    assert thread_label(unnamed) == "thread (0x3)"


def test_the_summary_gives_each_thread_its_share() -> None:
    loop = ("thread (0x1): MainThread", "run_until_complete (x)", "send (gateway/ws.py:3)")
    task = ("thread (0x1): MainThread", "_reader (gateway/ws.py:288)")
    pool = ("thread (0x2): asyncio_0", "_worker (concurrent/futures/thread.py:9)")
    text = summarise(Counter({loop: 2, task: 1, pool: 1}))
    assert "time by thread:" in text
    assert " 75.0%  MainThread" in text
    assert " 25.0%  asyncio_0" in text


def test_without_threads_there_is_no_thread_table() -> None:
    text = summarise(Counter({("main (a.py:1)", "send (gateway/ws.py:3)"): 2}))
    assert "time by thread:" not in text


def test_a_threads_busy_share_of_the_recording() -> None:
    loop = ("thread (0x1): MainThread", "run_until_complete (x)", "send (gateway/ws.py:3)")
    text = summarise(Counter({loop: 57}), possible=100)
    assert "100.0%  MainThread  (busy 57 % of the recording)" in text

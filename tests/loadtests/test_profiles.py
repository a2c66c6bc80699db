"""The py-spy summary reads threads apart (`--threads`), so a ramp's profile tells the event
loop's time from its worker threads'."""

from collections import Counter

from loadtests.profiles import summarise, thread_label


def test_threads_are_named_for_what_they_run() -> None:
    loop = ("thread (0x1): MainThread", "main (cluster/__main__.py:1)", "run_until_complete (x)")
    pool = ("thread (0x2)", "_bootstrap (threading.py:1)", "_worker (concurrent/futures/thread.py)")
    other = ("thread (0x3): redis-supervisor", "_bootstrap (threading.py:1)", "wait (x)")
    assert thread_label(loop) == "event loop"
    assert thread_label(pool) == "executor (asyncio.to_thread)"
    assert thread_label(other) == "thread (0x3): redis-supervisor _bootstrap (threading.py:1)"


def test_the_summary_gives_each_thread_its_share() -> None:
    loop = ("thread (0x1): MainThread", "run_until_complete (x)", "send (gateway/ws.py:3)")
    pool = ("thread (0x2)", "_worker (concurrent/futures/thread.py:9)", "get_actor (ray/x.py:1)")
    text = summarise(Counter({loop: 3, pool: 1}))
    assert "time by thread:" in text
    assert " 75.0%  event loop" in text
    assert " 25.0%  executor (asyncio.to_thread)" in text


def test_without_threads_there_is_no_thread_table() -> None:
    text = summarise(Counter({("main (a.py:1)", "send (gateway/ws.py:3)"): 2}))
    assert "time by thread:" not in text

"""The data plane's messages survive their framing unchanged, and a line that is not one of
them is refused with `BadMessage`, never half-read."""

from __future__ import annotations

import pytest

from actors.codec import (
    BadMessage,
    decode,
    encode,
)
from actors.link_messages import (
    Answer,
    Bye,
    Call,
    Follow,
    Gone,
    Hello,
    Message,
    Ping,
    Pong,
    Refused,
    Welcome,
)
from actors.protocol import (
    Act,
    Batch,
    Entry,
    ErrorBody,
    Join,
    Joined,
    Leave,
    Outcome,
    Unreadable,
    Views,
    ViewSet,
    entry_from_json,
)
from engine.commands import (
    AddBot,
    AnswerClaim,
    CallContre,
    CallQuatro,
    CancelClaim,
    CastVote,
    ChangeSettings,
    ChooseSign,
    ClaimSeat,
    Command,
    Emit,
    EndTutorial,
    FillBots,
    LeaveSeat,
    NextRound,
    Ready,
    Rematch,
    RemoveBot,
    RequestVote,
    SetFloor,
    StartMatch,
    Swap,
    TakeSeat,
)
from engine.wire import ASKER, LOBBY_KINDS, SEATLESS_KINDS, SOCKET_KINDS, kind_of

EVENT = Entry(7, "seat", 2, {"type": "round", "hand": ["AS"]}, 1234, "gw-a", ("p-2",))

EVERY_MESSAGE: list[Message] = [
    Hello("s3cret", "gw-a", "ABCDEF", "0123abcd"),
    Welcome("0123abcd"),
    Refused("refused"),
    Follow(-1),
    Batch((EVENT,), head=7, resync=True),
    Batch(()),
    Call(1, Act.of("gw-a/c1:1", "gw-a", "p-1", "swap", {"card": "AS", "slot": 0, "expect": "KD"})),
    Call(2, Join("gw-a/c1:0", "gw-a", "gw-a/c1", "p-1")),
    Call(3, Leave("gw-a", "gw-a/c1")),
    Call(4, Views(((0, "p-0"), (2, "p-2")))),
    Answer(1, Outcome(False, ErrorBody("cooldown", "wait", retry_in=400), 1, (EVENT,))),
    Answer(1, Outcome(True, replayed=True)),
    Answer(2, Joined(1, 1, {"code": "ABCDEF", "hand": []}, 9, (EVENT,))),
    Answer(4, ViewSet(9, 1234, {2: Joined(2, 0, {"hand": ["AS"]}, 9)}, {2: "p-2"})),
    Ping(3),
    Pong(3),
    Bye(),
    Gone(),
]


@pytest.mark.parametrize("msg", EVERY_MESSAGE, ids=lambda m: type(m).__name__)
def test_every_message_comes_back_as_it_was_sent(msg: Message) -> None:
    line = encode(msg)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1  # one line per message, whatever the strings hold
    assert decode(line) == msg


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"not json\n",
        b"[]\n",
        b'{"t": "nope"}\n',
        b'{"t": "call", "rid": 1, "request": {"t": "pong", "n": 1}}\n',  # a call of a non-request
        b'{"t": "answer", "rid": 1, "reply": {"t": "act"}}\n',
        b'{"t": "batch", "events": [[1, "nobody", 0, {}, 0, ""]]}\n',  # an unknown scope
        b'{"t": "follow"}\n',
        b'{"t": "ping", "n": "x"}\n',
        b"[" * 100_000 + b"\n",
    ],
)
def test_a_line_that_is_not_a_message_is_refused(line: bytes) -> None:
    with pytest.raises(BadMessage):
        decode(line)


# One command of each kind the wire carries, as the edge builds it (the asker's seat left to the
# table); a kind added to engine.wire without one here fails the test below.
EVERY_COMMAND: list[Command] = [
    Ready(ASKER),
    ChooseSign(ASKER, emoji="🐟"),
    Swap(ASKER, card="AS", slot=3, expect="KD"),
    SetFloor(ASKER, open=True),
    Emit(ASKER, emoji="🌶"),
    CallQuatro(ASKER),
    CallContre(ASKER, team=1),
    CallContre(ASKER),
    RequestVote(ASKER),
    CastVote(ASKER, accept=False),
    NextRound(ASKER),
    Rematch(ASKER),
    LeaveSeat(ASKER, target=2),
    AddBot(ASKER, target=1),
    RemoveBot(ASKER, target=1),
    FillBots(ASKER),
    StartMatch(ASKER),
    ChangeSettings(ASKER, bot_level="hard", watchers=False),
    AnswerClaim(ASKER, target=3, accept=True),
    EndTutorial(ASKER),
    TakeSeat(2, player_id="p-1", name="Ana"),
    ClaimSeat(3, player_id="p-1", name="Ana"),
    CancelClaim(ASKER, player_id="p-1"),
]


def test_every_kind_of_command_crosses_the_data_plane_typed() -> None:
    assert {kind_of(c) for c in EVERY_COMMAND} == SOCKET_KINDS | LOBBY_KINDS | SEATLESS_KINDS
    for command in EVERY_COMMAND:
        msg = Call(5, Act("gw-a/c1:2", "gw-a", "p-1", command, expires=99))
        assert decode(encode(msg)) == msg, command


def test_a_command_this_version_cannot_read_arrives_unreadable_not_as_a_broken_line() -> None:
    """A newer gateway's kind (or a field missing) is the table's to refuse, with the engine's
    code: the link that carried it stays up."""
    line = (
        b'{"t":"call","rid":1,"request":{"t":"act","cmd_id":"c","origin":"gw","player_id":"p",'
        b'"kind":"juggle","args":{"balls":3},"expires":null}}\n'
    )
    msg = decode(line)
    assert isinstance(msg, Call)
    assert isinstance(msg.request, Act)
    command = msg.request.command
    assert isinstance(command, Unreadable)
    assert (command.kind, command.error.code) == ("juggle", "unknown_type")
    missing = decode(line.replace(b'"juggle","args":{"balls":3}', b'"swap","args":{"card":"AS"}'))
    assert isinstance(missing, Call)
    assert isinstance(missing.request, Act)
    assert isinstance(missing.request.command, Unreadable)
    assert missing.request.command.error.code == "bad_message"


def test_an_entry_saved_before_holders_existed_reaches_nobody_privately() -> None:
    old = entry_from_json([1, "team", 0, {"type": "sign"}, 5, ""])
    assert old.holders == ()
    assert entry_from_json(list(EVENT)) == EVENT


def test_every_table_call_names_the_type_it_is_answered_with() -> None:
    """What `actors.ray_calls.ask` checks each answer against; pickled as Ray sends them."""
    import pickle

    from actors.protocol import (
        Address,
        Endpoint,
        HandedOver,
        HandOver,
        Open,
        Overview,
        Probe,
        Renew,
        Seated,
        SeatOf,
        Serve,
        Status,
        Summary,
        Unsubscribe,
        answer_type,
    )

    overview = Overview.of({"players": 4, "phase": "lobby", "code": "ABCDEF"})
    answered = [
        (Probe(), Status(1, "n", "", 0, "i", 0, 0)),
        (Endpoint(), Address("10.0.0.1", 20000, "i")),
        (Endpoint(), None),
        (Summary(), overview),
        (SeatOf("p0"), Seated(0, 4, "lobby")),
        (Serve(Leave("gw", "gw/1")), Outcome(True)),
        (Serve(Views(((0, "p0"),))), ViewSet(3, 0)),
        (Open("ABCDEF", {"players": 4}, "p0", "Ann", (600.0, 600.0), 60), Outcome(True)),
        (HandOver(), HandedOver("ABCDEF", True)),
        (Renew("gw"), False),
        (Unsubscribe("gw"), None),
    ]
    for call, answer in answered:
        assert pickle.loads(pickle.dumps(call)) == call
        assert isinstance(answer, answer_type(call)), call
    assert not isinstance({"host": "10.0.0.1"}, answer_type(Endpoint()))  # an older answer
    assert not isinstance(None, answer_type(Probe()))
    assert not isinstance(Outcome(True), answer_type(SeatOf("p0")))
    assert (overview.players, overview.phase) == (4, "lobby")
    with pytest.raises(TypeError):
        answer_type(Leave("gw", "gw/1"))  # type: ignore[arg-type]  # a request, not a call

"""Seat geometry (R1): partners sit opposite, team k holds seats k and k + n/2."""


def teams(players: int) -> int:
    return players // 2


def partner(seat: int, players: int) -> int:
    return (seat + players // 2) % players


def team_of(seat: int, players: int) -> int:
    return seat % (players // 2)


def team_seats(team: int, players: int) -> tuple[int, int]:
    return (team, team + players // 2)

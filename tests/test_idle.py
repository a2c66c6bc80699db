"""tests.idle reads vmstat's idle column by its header, whatever columns come before it."""

from __future__ import annotations

from tests.idle import idle_samples

LOG = """\
procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
 6  0      0 20500304  83780 3509380    0    0    63   772 1517 3919 52  8 37  0  2
11  0      0 20500304  83780 3509380    0    0     0   163 2063 9982 86 14  0  0  1
procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
 2  0      0 20500304  83780 3509380    0    0     0   110 2289 10217 14  4 81  0  1
"""


def test_the_idle_column_of_every_sample_and_no_header() -> None:
    assert idle_samples(LOG) == [37, 0, 81]

"""Mean CPU per process group over a window of a finished run's node.csv, for runs whose step
never went live (so capacity.md has no row for them).

    python -m loadtests.node_means results/ab3-socket-160            # last 200 s but the final 20
    python -m loadtests.node_means results/ab3-socket-160 --from-end 200 --to-end 20

Prints one JSON object: group -> mean CPU (% of one core) and processes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from loadtests.report import node_means, read_node


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m loadtests.node_means", description=__doc__)
    p.add_argument("run", type=Path, help="a results folder holding node.csv")
    p.add_argument("--from-end", type=float, default=200.0, help="window start, s before the end")
    p.add_argument("--to-end", type=float, default=20.0, help="window end, s before the end")
    a = p.parse_args()
    rows = read_node(a.run / "node.csv")
    if not rows:
        raise SystemExit(f"no node.csv rows in {a.run}")
    end = max(r.t for r in rows)
    means = node_means(rows, end - a.from_end, end - a.to_end)
    out = {g: {"cpu": round(m["cpu"], 1), "procs": int(m["procs"])} for g, m in means.items()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()

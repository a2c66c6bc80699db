"""The deployment test's images built ahead, on their own daemon, so that CI can make them while
the main suite runs (.ci/run): the base is a debootstrap of bookworm and the image a pip install,
two minutes of mostly waiting on a clean clone that `make test-deploy` then finds in its cache
(.cache/deploy, the daemon's data root).

    .venv/bin/python -m tests.deploy.image        # make deploy-image
"""

from __future__ import annotations

import signal
import sys
import time

from tests.deploy.docker import BASE_TAG, Docker, Dockerd, DockerError, build_project_image

IMAGE_REPO = "quatro-deploy-test"
IMAGE_TAG = "local"
# The base carries Debian bookworm's redis-server (7.0.15): the chart's schema wants a patch
# version as the tag, and the test's own base, so tagged, is that version.
REDIS_REPO = "quatro-test-redis"
REDIS_TAG = "7.0.15"


def build_images(docker: Docker) -> None:
    """The project image and the Redis one, as the chart's values name them."""
    build_project_image(docker, f"{IMAGE_REPO}:{IMAGE_TAG}")
    docker.run("tag", BASE_TAG, f"{REDIS_REPO}:{REDIS_TAG}")


def main() -> int:
    # Run in the background by .ci/run, which stops it with SIGTERM when it is itself stopped:
    # the daemon is stopped on the way out, not left running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    dockerd = Dockerd()
    try:
        build_images(dockerd.start())
    except DockerError as exc:
        print(f"deploy images: {exc}", file=sys.stderr)
        return 1
    finally:
        dockerd.stop()
    print(f"deploy images built in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

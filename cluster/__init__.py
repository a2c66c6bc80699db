"""Settings, connections to Ray and Redis, and the embedded launcher behind `make run`."""

"""The Ray table actor: wraps the engine, owns the timers, snapshots to Redis, pushes events."""

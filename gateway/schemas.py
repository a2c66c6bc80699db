"""`python -m gateway.schemas`: the JSON Schemas of every wire model (REST bodies and WebSocket
frames), generated from the pydantic models the gateway validates with."""

from __future__ import annotations

import json

from pydantic import BaseModel

from gateway import frame_models, models

WIRE_MODELS: list[type[BaseModel]] = [
    models.NewSession,
    models.SessionOut,
    models.NewTable,
    models.TableOut,
    models.QuickIn,
    models.QuickOut,
    models.TableSummary,
    models.SeatOut,
    models.BotIn,
    models.SettingsIn,
    models.Emojis,
    models.ClientConfig,
    models.ErrorOut,
    *frame_models.ALL_FRAMES.values(),
    frame_models.Ack,
    frame_models.Pong,
    frame_models.ErrorFrame,
]


def schemas() -> dict[str, object]:
    return {m.__name__: m.model_json_schema() for m in WIRE_MODELS}


if __name__ == "__main__":
    print(json.dumps(schemas(), indent=2, ensure_ascii=False))

"""POST /api/sessions: a name in, a bearer token out."""

from __future__ import annotations

from fastapi import APIRouter

from gateway.deps import Svc, quota
from gateway.models import NewSession, SessionOut

router = APIRouter(prefix="/api", tags=["sessions"])


@router.post(
    "/sessions", status_code=201, response_model=SessionOut, dependencies=[quota("session")]
)
async def create_session(body: NewSession, svc: Svc) -> SessionOut:
    token, session = await svc.sessions.create(body.name)
    return SessionOut(token=token, player_id=session.player_id, name=session.name)

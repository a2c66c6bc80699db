"""The FastAPI gateway: REST, the /ws WebSocket, sessions, and the web client's static files."""

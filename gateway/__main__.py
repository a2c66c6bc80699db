"""`python -m gateway`: one gateway process joining an existing Ray cluster and Redis
(RAY_ADDRESS, REDIS_URL, PORT)."""

from gateway.serve import serve

if __name__ == "__main__":
    serve()

"""The Locust users of loadtests/locustfile.py: every seat of a table a player (gevent)."""

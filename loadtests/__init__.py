"""Locust load tests and benchmarks that drive a running Quatro stack."""

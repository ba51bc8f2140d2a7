"""`sourcewatch serve`: what users look at and consume — the dashboard, the data API, feeds, Prometheus metrics.

An aiohttp application over the stored tables (read through infra.sql_owner: a worker holding the embedded
chDB answers for it) and the topics (a watch request is a message, as `sourcewatch watch` sends). Nothing here
runs in the stream: the service reads what the workers stored.
"""

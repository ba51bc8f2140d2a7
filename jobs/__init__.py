"""Jobs that run the whole pipeline from outside it: a crawl until idle, the watch loop for a while, the demo,
the benchmarks against the pipeline, topic replay and retraining on replayed observations.

They sit between the Faust runtime (`streams/`) and the CLI: each starts a worker in its own process (or
produces to the topics of running ones) and reads its counters and ClickHouse, so they are neither part of
the runtime nor a model's offline evaluation (those live beside their models).
"""

"""The fetch stage's core: polite, bounded, safe HTTP fetching with no Kafka in it."""

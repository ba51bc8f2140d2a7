"""Message models of every sourcewatch topic and the topic registry (no I/O here)."""

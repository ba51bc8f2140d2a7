"""The low layer both models and agents read pages with: body decoding, the parsed DOM, URLs and links."""

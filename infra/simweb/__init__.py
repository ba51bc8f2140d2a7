"""The simulated web: generated sites whose listing pages gain items over a simulated clock."""

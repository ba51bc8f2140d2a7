"""What every saved model shares: the error for a file written by another version of the code."""


class ModelVersionError(RuntimeError):
    """A model file written by another version of this code."""

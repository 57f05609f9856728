"""What the stoker package raises."""

from typing import Optional


class StokerError(RuntimeError):
    """Something the loader could not do (the server could not start, no room for the ring, ...)."""


class DataError(StokerError):
    """A sample or shard could not be read; the message is the JVM's: resource, offset, what was expected."""

    def __init__(self, message: str, resource: Optional[str] = None, index: Optional[int] = None) -> None:
        super().__init__(message)
        self.resource = resource
        self.index = index


class LoaderDied(StokerError):
    """The server process ended under the loader; ``exit_status`` is its exit status (negative: the signal)."""

    def __init__(self, message: str, exit_status: Optional[int] = None) -> None:
        super().__init__(message)
        self.exit_status = exit_status


class LoaderTimeout(StokerError, TimeoutError):
    """Nothing came from the server within ``timeout=`` seconds; the message says what was awaited and what the server is doing."""

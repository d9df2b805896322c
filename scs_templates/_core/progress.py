"""The progress callback that long-running steps report through, and the one that says nothing.

Install, delete, the toolchain build, the waits and the provider's cloud steps all tell the
caller what they are doing through a ``Progress`` (the CLI prints each line to stderr; a library
caller may log it or drop it). One definition here, so every layer speaks the same type.
"""

from collections.abc import Callable

__all__ = ["Progress", "quiet"]

Progress = Callable[[str], None]


def quiet(_: str) -> None:
    """A progress callback that says nothing."""
    return None

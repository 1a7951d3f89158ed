"""Typed errors that say what went wrong and what to do about it."""


def _rebuild(cls: type, args: tuple, state: dict) -> BaseException:
    """Unpickle an error without calling its `__init__` (which may take other arguments than its message)."""
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class RaystormError(Exception):
    """A user-facing error: the message names the fix. Exit code 1 unless set.

    Every subclass pickles as it is, whatever its constructor takes, so an error
    raised inside a Ray actor reaches the driver with its type and fields."""

    exit_code = 1

    def __reduce__(self):
        return _rebuild, (type(self), self.args, dict(self.__dict__))


class UsageError(RaystormError):
    exit_code = 2


class CollectionNotFound(RaystormError):
    def __init__(self, name: str):
        super().__init__(f"collection '{name}' not found: run `raystorm ingest PATH --collection {name}`")
        self.name = name


class EmptyCollection(RaystormError):
    def __init__(self, name: str):
        super().__init__(f"no passages in collection '{name}': run `raystorm ingest PATH --collection {name}` first")
        self.name = name


class EmptyCorpus(RaystormError):
    """Nothing loadable was found under the given paths."""


class ModelUnavailable(RaystormError):
    """An embedding model could not be loaded."""


class StageFailed(RaystormError):
    """A pipeline stage failed; what finished before it is kept and a rerun resumes."""

    def __init__(self, stage: str, reason: str, topic: str | None = None):
        where = f"topic '{topic}', " if topic else ""
        super().__init__(f"{where}stage '{stage}' failed: {reason}. Finished stages are kept; rerun to resume.")
        self.stage = stage
        self.reason = reason
        self.topic = topic

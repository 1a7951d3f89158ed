"""Typed errors that say what went wrong and what to do about it.

`RaystormError`, the base of every raystorm error, lives here in the lowest layer because
every package may raise one (`cluster → actors → agents → retrieval`); the errors of a layer
above live with the code that raises them (`agents.lm.errors`, `agents.storm.checkpoints.StageFailed`, ...)."""


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

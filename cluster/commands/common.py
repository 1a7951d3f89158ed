"""Options shared by the commands: where data lives and how the store is reached."""

from __future__ import annotations

import argparse
import sys

from retrieval.config import StoreSettings


def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("data and store")
    group.add_argument("--data-dir", metavar="DIR",
                       help="where raystorm keeps its store, models, caches and runs "
                            "(default: $RAYSTORM_HOME or ~/.raystorm)")
    group.add_argument("--qdrant-url", metavar="URL",
                       help="a Qdrant server or cluster (default: $QDRANT_URL, else Qdrant embedded on disk "
                            "in the data dir); the API key is read from $QDRANT_API_KEY")
    group.add_argument("--dense-model", metavar="NAME",
                       help="fastembed dense model (default: the bundled offline all-MiniLM-L6-v2; "
                            "other names download, so they need network)")


def collection_name(text: str) -> str:
    """argparse `type=` for a collection name: refused in one line before any work."""
    from retrieval.errors import UsageError
    from retrieval.config import check_collection_name

    try:
        return check_collection_name(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def count(low: int, high: int | None = None):
    """argparse `type=` for a whole number in [low, high]."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low or (high is not None and value > high):
            bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {value}")
        return value

    parse.__name__ = "number"  # argparse names the type in its own messages
    return parse


def store_settings(args: argparse.Namespace) -> StoreSettings:
    return StoreSettings.resolve(args.data_dir, args.qdrant_url, args.dense_model)


def relative_source(source: str) -> str:
    """A path shown relative to the working directory when it is under it."""
    from pathlib import Path

    try:
        return str(Path(source).relative_to(Path.cwd()))
    except ValueError:
        return source


def place_of(source: str, path: str, line_start: int, line_end: int, part=None) -> str:
    """Where a passage is: "url:lines (file)", or "file:lines" when it has no URL; in a PDF, a deck or
    a workbook, "file, p. 3, lines 12–18". The file is always named, as several files may claim one URL."""
    if part is not None:
        from retrieval.documents import line_range

        place = f"{relative_source(source)}, {line_range(part, line_start, line_end)}"
    else:
        place = f"{relative_source(source)}:{line_start}-{line_end}"
    return f"{place} ({relative_source(path)})" if path and path != source else place


def info(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_async(coroutine):
    """`asyncio.run(coroutine)`, stopped by Ctrl-C and quiet about it.

    On Ctrl-C the main task is cancelled, and cancelled again every second while it
    runs: a library below may swallow one cancellation (autogen's runtime can), and
    the user's interrupt must still end the run. Then `KeyboardInterrupt` is raised,
    which the CLI turns into one line. The tracebacks of tasks torn down on the way
    (autogen's runtime tasks) are dropped."""
    import asyncio
    import signal

    async def guarded():
        loop = asyncio.get_running_loop()
        main = asyncio.current_task()
        interrupted: list[bool] = []

        def cancel() -> None:
            if not main.done():
                main.cancel()
                loop.call_later(1.0, cancel)

        def on_interrupt() -> None:
            loop.set_exception_handler(lambda loop, context: None)
            if not interrupted:
                interrupted.append(True)
                cancel()

        try:
            loop.add_signal_handler(signal.SIGINT, on_interrupt)
            installed = True
        except (NotImplementedError, RuntimeError, ValueError):  # no signals here (not the main thread)
            installed = False
        try:
            result = await coroutine
        except asyncio.CancelledError:
            loop.set_exception_handler(lambda loop, context: None)
            if interrupted:
                raise KeyboardInterrupt from None
            raise
        finally:
            if installed:
                loop.remove_signal_handler(signal.SIGINT)
        if interrupted:  # the run finished although cancelled: the user still asked it to stop
            raise KeyboardInterrupt
        return result

    return asyncio.run(guarded())

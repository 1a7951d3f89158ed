"""`raystorm submit [--address URL] [--no-wait] -- report ...`: run a raystorm command as a Ray job.

The same as `ray job submit -- python -m cluster.cli report ...`, over
`ray.job_submission.JobSubmissionClient`, except that the job runs the CLI with
the Python that runs Ray on the head (a head started as `/venv/bin/ray start`
from a service manager has no venv on its PATH, so a bare `python` would be the
system's, without raystorm's dependencies). The address is the cluster's job
server (its dashboard, e.g. http://127.0.0.1:8265), defaulting to $RAY_ADDRESS
as for `ray job submit`. Token authentication stays on: the token is read as
Ray reads it ($RAY_AUTH_TOKEN, $RAY_AUTH_TOKEN_PATH, or ~/.ray/auth_token).
Without --no-wait it streams the job's logs until the job ends, within --timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import sys
import time

from cluster.commands.common import info
from cluster.runtime import enable_token_auth
from retrieval.errors import RaystormError, UsageError

RUNNABLE = ("report", "ask", "ingest", "search", "collections", "bench")
DEFAULT_TIMEOUT_S = 24 * 3600.0
TERMINAL = ("SUCCEEDED", "FAILED", "STOPPED")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "submit", help="run a raystorm command on a Ray cluster as a job",
        description="Submit `raystorm COMMAND ...` (everything after --) to a Ray cluster's job server. "
                    "The job's driver runs on the cluster and joins it, so `report` fans out over every "
                    "node. The cluster needs raystorm installed (or --working-dir with a checkout).",
        epilog="example: raystorm submit --address http://127.0.0.1:8265 -- report --topics topics.txt "
               "--collection docs --out runs/")
    p.add_argument("--address", metavar="URL",
                   help="the job server, e.g. http://HEAD:8265 (default: $RAY_ADDRESS)")
    p.add_argument("--working-dir", metavar="DIR",
                   help="upload this directory and run the job in it (e.g. a raystorm checkout)")
    p.add_argument("--env", action="append", default=[], metavar="NAME",
                   help="pass this environment variable's value to the job (repeatable). Values are "
                        "visible in the job's runtime_env on the dashboard: prefer keys set on the cluster")
    p.add_argument("--submission-id", metavar="ID", help="a job id of your choice (default: generated)")
    p.add_argument("--no-wait", action="store_true", help="print the job id and return")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                   help="stop waiting after this long (the job keeps running); default one day")
    p.add_argument("command_args", nargs=argparse.REMAINDER, metavar="-- COMMAND ...",
                   help="the raystorm command to run, after --")
    p.set_defaults(func=run)


# The job's shell is started by Ray's job supervisor, a Ray worker of the interpreter `ray start` ran
# with. Its process title is rewritten and its executable resolves past a venv's symlink, but the
# libraries it loaded name the installation: .../lib/pythonX.Y/site-packages/ray/_raylet.so, whose
# root holds bin/python (a venv's python, which finds the venv's packages). Use it; else the
# supervisor's executable; and say what to do when raystorm does not import there.
_HEAD_PYTHON = (
    "so=$(grep -m1 -o '/[^ ]*/site-packages/ray/_raylet[^ ]*[.]so' /proc/$PPID/maps 2>/dev/null); "
    'py="${so%/lib/python*/site-packages/*}/bin/python"; '
    '{ [ -n "$so" ] && [ -x "$py" ]; } || py=$(readlink /proc/$PPID/exe 2>/dev/null); [ -x "$py" ] || py=python; '
    '"$py" -c "import cluster.cli, httpx, ray" 2>/dev/null || { echo "raystorm: the Python that runs Ray on this '
    'node ($py) cannot import raystorm and its dependencies: install raystorm into it" >&2; exit 1; }; '
    'exec "$py"'
)


def entrypoint(command_args: list[str]) -> str:
    """The job's shell command: the raystorm CLI through the Python that runs Ray on the head."""
    args = list(command_args)
    if args and args[0] == "--":
        args = args[1:]
    if args and args[0] == "raystorm":
        args = args[1:]
    if not args:
        raise UsageError("nothing to submit: give the command after --, e.g. "
                         "`raystorm submit -- report --topics topics.txt --collection docs`")
    if args[0] not in RUNNABLE:
        raise UsageError(f"`{args[0]}` is not a raystorm command that runs as a job; use one of: "
                         f"{', '.join(RUNNABLE)}")
    return f"{_HEAD_PYTHON} {shlex.join(['-m', 'cluster.cli', *args])}"


def _client(address: str | None):
    address = address or os.environ.get("RAY_ADDRESS")
    if not address:
        raise UsageError("no job server address: pass --address http://HEAD:8265 or set RAY_ADDRESS")
    enable_token_auth()
    from ray.exceptions import AuthenticationError
    from ray.job_submission import JobSubmissionClient

    try:
        return JobSubmissionClient(address), address
    except AuthenticationError as exc:
        raise RaystormError(f"the Ray job server at {address} refused the token: {str(exc).splitlines()[0]}. "
                            "Use the cluster's token: copy it to ~/.ray/auth_token, or set RAY_AUTH_TOKEN "
                            "(`ray get-auth-token` on the head prints it)") from None
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RaystormError(f"cannot reach the Ray job server at {address}: {exc}. Check the address "
                            "(the dashboard port, 8265 by default) and the token "
                            "(~/.ray/auth_token or $RAY_AUTH_TOKEN)") from exc


def run(args: argparse.Namespace) -> int:
    command = entrypoint(args.command_args)
    runtime_env: dict = {}
    if args.working_dir:
        if not os.path.isdir(args.working_dir):
            raise UsageError(f"--working-dir {args.working_dir} is not a directory")
        runtime_env["working_dir"] = args.working_dir
    missing = [name for name in args.env if name not in os.environ]
    if missing:
        raise UsageError(f"--env {', '.join(missing)}: not set in this environment")
    if args.env:
        runtime_env["env_vars"] = {name: os.environ[name] for name in args.env}
    client, address = _client(args.address)
    job_id = client.submit_job(entrypoint=command, runtime_env=runtime_env or None,
                               submission_id=args.submission_id)
    info(f"submitted job {job_id} to {address}: {command}")
    if args.no_wait:
        print(job_id)
        info(f"follow it with `ray job logs --follow {job_id}`; stop it with `ray job stop {job_id}`")
        return 0
    try:
        status = asyncio.run(follow(client, job_id, args.timeout))
    except KeyboardInterrupt:
        info(f"stopped waiting; job {job_id} keeps running (`ray job stop {job_id}` stops it)")
        return 130
    if status is None:
        info(f"job {job_id} still running after {args.timeout:.0f} s; it keeps running "
             f"(`ray job status {job_id}`)")
        return 124
    info(f"job {job_id}: {status}")
    return 0 if status == "SUCCEEDED" else 1


async def follow(client, job_id: str, timeout_s: float) -> str | None:
    """Stream the job's logs to stdout until it ends; its final status, or None on timeout."""
    deadline = time.monotonic() + timeout_s

    async def tail() -> None:
        async for chunk in client.tail_job_logs(job_id):
            sys.stdout.write(chunk)
            sys.stdout.flush()

    try:
        await asyncio.wait_for(tail(), timeout_s)
    except asyncio.TimeoutError:
        return None
    except RuntimeError as exc:  # the log stream broke; the status still tells how the job ends
        info(f"log stream of job {job_id} ended early ({exc}); waiting for its status")
    # the log stream closes when the job ends; its status can lag by a moment
    while time.monotonic() < deadline:
        status = str((await asyncio.to_thread(client.get_job_status, job_id)).value)
        if status in TERMINAL:
            return status
        await asyncio.sleep(0.5)
    return None

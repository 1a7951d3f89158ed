"""Starting or joining Ray: one call, the same for a laptop and a cluster.

No address: a local Ray sized for this machine. `auto`, `HOST:PORT` or
`ray://HOST:10001`: join that cluster; nothing else changes. Inside a Ray job
(`ray job submit` / `raystorm submit`) Ray sets `RAY_ADDRESS`, and raystorm
joins the job's cluster.

Where the driver runs matters for the embedded Qdrant store: its folder is on
the driver's disk, so the actors that open it are pinned to the driver's node
(`ActorOptions(pin_node=driver_node_id())`).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable

from pydantic import BaseModel

from retrieval.errors import RaystormError

_log = logging.getLogger(__name__)

NAMESPACE = "raystorm"
ADDRESS_ENV = ("RAYSTORM_RAY_ADDRESS", "RAY_ADDRESS")
_joined: str | None = None  # the address `connect` joined; None when it started a local Ray
_early: tuple[threading.Thread, threading.Event, list] | None = None  # `connect_early`: its thread, done, error


class ClusterInfo(BaseModel):
    """What the driver sees of the cluster it runs on."""

    address: str | None  # None: a local Ray started by this process
    nodes: int
    cpus: float
    client_mode: bool  # connected with ray://, the driver is on the cluster's head, not here

    def line(self) -> str:
        where = f"cluster {self.address}" if self.address else "local Ray"
        return f"{where}: {self.nodes} node(s), {self.cpus:g} CPUs"


def resolve_address(address: str | None = None) -> str | None:
    """`--address`, else $RAYSTORM_RAY_ADDRESS, else $RAY_ADDRESS (set inside Ray jobs), else None."""
    if address:
        return address
    for name in ADDRESS_ENV:
        if os.environ.get(name):
            return os.environ[name]
    return None


REACH_TIMEOUT_S = 10.0


def check_reachable(address: str) -> None:
    """A host:port (or ray://host:port) address answers a TCP connection within REACH_TIMEOUT_S, or one
    `RaystormError` naming it: Ray itself retries an unreachable head for minutes."""
    import socket

    hostport = address.removeprefix("ray://")
    if hostport == "auto" or ":" not in hostport:
        return  # "auto" is resolved by Ray from this machine's running head; nothing to probe here
    host, _, port = hostport.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_TIMEOUT_S):
            return
    except ValueError:
        raise RaystormError(f"--address {address}: not HOST:PORT (e.g. 10.0.0.5:6379, or auto)") from None
    except OSError as exc:
        raise RaystormError(f"no Ray cluster answers at {address} ({exc.strerror or exc}): check the address "
                            "(`ray status` on the head prints it) and that this machine can reach it") from None


JOIN_TIMEOUT_S = 30.0
TOKEN_SOURCES = "$RAY_AUTH_TOKEN, a file named by $RAY_AUTH_TOKEN_PATH, or ~/.ray/auth_token"


def token_source() -> str | None:
    """Where this host's Ray token is, as Ray looks for it (None: nowhere)."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return "$RAY_AUTH_TOKEN"
    named = os.environ.get("RAY_AUTH_TOKEN_PATH")
    if named:
        return f"$RAY_AUTH_TOKEN_PATH ({named})" if os.path.isfile(os.path.expanduser(named)) else None
    default = os.path.expanduser("~/.ray/auth_token")
    return default if os.path.isfile(default) else None


def enable_token_auth() -> None:
    """Send the token when one is found: a driver sends it only with RAY_AUTH_MODE=token (which `ray start`
    needs on the nodes too), so a token cluster would refuse it. RAY_AUTH_MODE, if set, decides."""
    if os.environ.get("RAY_AUTH_MODE") or not token_source():
        return
    os.environ["RAY_AUTH_MODE"] = "token"
    try:
        from ray._raylet import Config
    except ImportError:
        return
    Config.initialize("")  # Ray caches its config (the mode with it) when it is first read: read it again


def refused_join(address: str | None, exc: BaseException) -> RaystormError:
    """The error for a join that failed at a head that answers: the token setting missing here, if one is."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    source = token_source()
    if not source:
        what = (f"no Ray token on this host, and a cluster with token auth refuses a driver without one: put the "
                f"cluster's token in {TOKEN_SOURCES} (`ray get-auth-token` on the head prints it)")
    elif os.environ.get("RAY_AUTH_MODE") != "token":
        what = (f"RAY_AUTH_MODE={os.environ['RAY_AUTH_MODE']}, so the token in {source} is not sent: set "
                "RAY_AUTH_MODE=token (or unset it)")
    else:
        what = (f"if the cluster uses token auth, the token in {source} may not be its own (`ray get-auth-token` "
                "on the head prints it); else check the address (`ray status` on the head)")
    return RaystormError(f"could not join the Ray cluster at {address} ({first}): {what}")


def _quiet_sigterm_warning() -> None:
    # Ray would set its SIGTERM handler from the main thread; without it, SIGTERM ends this process
    # and, with it, the thread that joined and the daemons it started: nothing to warn about
    logging.getLogger("ray._private.worker").addFilter(
        lambda record: "SIGTERM handler is not set" not in record.getMessage())


def _bounded(join: Callable[[], object], address: str) -> None:
    """`join()` (a `ray.init` with an address) within JOIN_TIMEOUT_S, or one `RaystormError`: something
    that accepts connections but is no Ray head would keep Ray retrying for minutes. It runs in a thread
    of its own that lives as long as the process (Ray's daemons, if any, die with the thread that started
    them), so Ray sets no SIGTERM handler of its own and SIGTERM ends this process at once."""
    done, error = threading.Event(), []

    def run() -> None:
        try:
            join()
        except BaseException as exc:  # raised again in the caller's thread
            error.append(exc)
        finally:
            done.set()
        threading.Event().wait()

    _quiet_sigterm_warning()
    threading.Thread(target=run, name="raystorm-join", daemon=True).start()
    if not done.wait(JOIN_TIMEOUT_S):
        raise RaystormError(f"no Ray cluster answered at {address} within {JOIN_TIMEOUT_S:.0f} s (it accepts "
                            "connections, but is it a Ray head's GCS port? `ray status` on the head prints "
                            "the address)")
    if error:
        raise error[0]


def connect_early(address: str | None = None) -> None:
    """Start `connect(address)` in the background: Ray's daemons come up (seconds) while this process
    goes on with its own start-up (imports, the corpus check); the next `connect` waits for it and
    raises its error, if any. Call it once the cheap checks of the command line have passed."""
    global _early
    import ray

    if _early is not None or ray.is_initialized():
        return
    done = threading.Event()
    error: list[BaseException] = []

    def start() -> None:
        try:
            connect(address)
        except BaseException as exc:  # handed to the next `connect`, in the caller's thread
            error.append(exc)
        finally:
            done.set()
        # Ray's daemons die with the *thread* that started them (Linux's parent-death signal is per
        # thread): this one lives as long as the process, and goes with it
        threading.Event().wait()

    _quiet_sigterm_warning()
    thread = threading.Thread(target=start, name="raystorm-connect", daemon=True)
    _early = (thread, done, error)
    thread.start()


def connect(address: str | None = None, num_cpus: int | None = None,
            runtime_env: dict | None = None) -> ClusterInfo:
    """Idempotent `ray.init`. Actors ask for 0 or fractional CPUs, so small machines don't starve."""
    global _joined, _early
    import ray

    if _early is not None and threading.current_thread() is not _early[0]:
        _, done, error = _early
        done.wait()
        _early = None
        if error:
            raise error[0]
    if not ray.is_initialized():
        address = resolve_address(address)
        common = dict(namespace=NAMESPACE, ignore_reinit_error=True, logging_level=logging.WARNING,
                      log_to_driver=os.environ.get("RAYSTORM_RAY_LOGS") == "1")
        if runtime_env:
            common["runtime_env"] = runtime_env
        _joined = address
        try:
            if address:
                check_reachable(address)
                enable_token_auth()
                _bounded(lambda: ray.init(address=address, **common), address)
            else:
                # address="local": always start our own, never attach to another Ray running on this machine
                ray.init(address="local", num_cpus=num_cpus or os.cpu_count() or 2, include_dashboard=False, **common)
        except ConnectionError as exc:
            if not address:
                raise
            # Ray says only that it failed (its log lines say InvalidAuthToken): name what is missing here
            raise refused_join(address, exc) from None
    return cluster_info()


def cluster_info() -> ClusterInfo:
    import ray

    return ClusterInfo(address=_joined, nodes=sum(1 for n in ray.nodes() if n.get("Alive")),
                       cpus=float(ray.cluster_resources().get("CPU", 0.0)),
                       client_mode=bool(_joined and _joined.startswith("ray://")))


def driver_node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id()


def shutdown() -> None:
    import ray

    if ray.is_initialized():
        ray.shutdown()


def leave() -> None:
    """Disconnect this process from Ray now, if it joined (the `raystorm` command, as it ends). Ray's own
    exit hook first sleeps half a second so that worker log lines on their way reach the terminal: a
    report on the service ended ~0.9 s after its summary was printed instead of ~0.4 s. raystorm does
    not forward worker logs unless RAYSTORM_RAY_LOGS=1; then the hook is left to do it."""
    if "ray" not in sys.modules or os.environ.get("RAYSTORM_RAY_LOGS") == "1":
        return
    try:
        shutdown()
    except Exception as exc:  # (Ray's exit hook tries again; a command that did its work still succeeds)
        _log.debug("leaving Ray: %s", exc)

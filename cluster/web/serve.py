"""The web app as a Ray Serve deployment: one replica owns the collection's store (an embedded store opens
in one process), and every request of every user goes through it."""

from __future__ import annotations

from ray import serve

from cluster.web.app import create_app

_state: dict = {}


def _session():  # module functions, not lambdas: pickled by reference, so they read this module's state
    return _state["session"]


def _token():
    return _state.get("token")


def _gate():
    return _state["gate"]


app = create_app(_session, _token, _gate)


@serve.deployment(num_replicas=1, ray_actor_options={"num_cpus": 0}, max_ongoing_requests=256,
                  health_check_period_s=10, graceful_shutdown_timeout_s=5)
@serve.ingress(app)
class WebApp:
    """Opens the session the `raystorm web` command line describes (`options`: its parsed arguments)."""

    def __init__(self, options: dict, token: str | None, gate: dict):
        from argparse import Namespace

        from cluster.session import session_of
        from cluster.web import serve as here  # this class travels by value: the module's own state
        from cluster.web.guard import GateSettings

        here._state.update(gate=GateSettings.model_validate(gate), token=token)
        here._state.update(session=session_of(Namespace(**options)).open())

    def __del__(self):
        from cluster.web import serve as here

        session = here._state.pop("session", None)
        if session is not None:
            session.store.close()  # let go of the embedded store for the next owner

"""Typed errors of the language-model layer; each message says what to do next."""

from __future__ import annotations

from retrieval.errors import RaystormError, UsageError


class LLMConfigError(UsageError):
    """A `--llm` / `--role-llm` setting that cannot be used as given."""


class ModelOutputError(RaystormError):
    """The model's reply was not valid output for the step, even after one repair retry."""

    def __init__(self, step: str, role: str, model: str, problem: str, reply: str):
        excerpt = reply.strip().replace("\n", " ")
        excerpt = (excerpt[:160] + "...") if len(excerpt) > 160 else excerpt
        super().__init__(
            f"step '{step}' (role '{role}'): model '{model}' gave invalid output twice "
            f"(first reply, then one repair retry): {problem}. The reply began: {excerpt!r}. "
            f"Use a stronger model for this role (--role-llm {role}=MODEL), or raise "
            "--llm-max-tokens if the reply was cut off"
        )
        self.step = step
        self.role = role
        self.model = model
        self.problem = problem
        self.reply = reply


class LLMEndpointError(RaystormError):
    """A request to the model's endpoint failed; `reason` says how."""

    def __init__(self, message: str, *, endpoint: str, model: str, reason: str):
        super().__init__(message)
        self.endpoint = endpoint
        self.model = model
        self.reason = reason


class EndpointUnavailableError(LLMEndpointError):
    """Transient failures (429, 5xx, timeouts, refused connections) outlasted the retries."""

    def __init__(self, *, endpoint: str, model: str, reason: str, attempts: int):
        super().__init__(
            f"LLM endpoint {endpoint} (model '{model}') still failing after {attempts} attempts: "
            f"{reason}. Check that the server is up and reachable, or raise --llm-retries / "
            "--llm-timeout; finished stages are kept, so rerunning resumes",
            endpoint=endpoint,
            model=model,
            reason=reason,
        )
        self.attempts = attempts


class RequestRejectedError(LLMEndpointError):
    """The endpoint refused the request in a way a retry cannot fix (401, 403, 404, 400)."""

    def __init__(self, *, endpoint: str, model: str, reason: str, hint: str):
        super().__init__(
            f"LLM endpoint {endpoint} rejected the request for model '{model}': {reason}. {hint}",
            endpoint=endpoint,
            model=model,
            reason=reason,
        )
        self.hint = hint

"""The HTTP API (OpenAPI at /openapi.json) and the pages, over one `Session`.

Every route calls the session, which calls the functions the CLI calls; the API returns the CLI's
`--json` shapes. Pages are server-rendered with Jinja2 autoescaping (nothing from a document or a model
becomes markup) plus one small script; nothing is fetched from the internet.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import quote

from fastapi import FastAPI, HTTPException, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import Field

from cluster.export import MEDIA_TYPES
from cluster.limits import (MAX_NAME, AskRequest, Citation, GraphK, Hops, InterviewRequest, K, Name, Question,
                            ReportRequest, SearchMode, Since, Source, history_dicts)
from cluster.web.guard import Gate
from retrieval.errors import RaystormError, UsageError

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(HERE / "templates"))  # autoescapes .html templates


def create_app(get_session, get_token, get_gate) -> FastAPI:
    """The app; `get_session()` gives the opened `Session`, `get_token()` the token every request must
    carry (None: none), `get_gate()` the hosts it answers and the largest body it reads (`GateSettings`).
    Routes are async: the session's reports run on this event loop."""
    import fastapi_offline

    # /docs: Swagger UI from the files a package ships (fastapi-offline's), not from a CDN
    app = FastAPI(title="raystorm", description="Search, ask, reports, interviews and the evidence graph of "
                  "one collection.", version="1", docs_url=None, redoc_url=None)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    app.mount("/docs-static", StaticFiles(directory=str(Path(fastapi_offline.__file__).parent / "static")),
              name="docs-static")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url="/openapi.json", title="raystorm API",
                                   swagger_js_url="/docs-static/swagger-ui-bundle.js",
                                   swagger_css_url="/docs-static/swagger-ui.css",
                                   swagger_favicon_url="/docs-static/favicon.png")

    @app.middleware("http")
    async def guard(request: Request, call_next):
        token = get_token()
        if token is not None:
            given = request.headers.get("authorization", "") or f"Bearer {request.cookies.get('raystorm_token', '')}"
            if request.query_params.get("token"):
                given = f"Bearer {request.query_params['token']}"
            if not hmac.compare_digest(given, f"Bearer {token}"):
                return PlainTextResponse("a token is required (Authorization: Bearer TOKEN)", status_code=401)
        response = await call_next(request)
        if token is not None and request.query_params.get("token"):  # the page's own requests carry it on
            response.set_cookie("raystorm_token", token, httponly=True, samesite="strict")
        return response

    app.add_middleware(Gate, settings=get_gate)  # added last: runs first, before the token and any route

    @app.exception_handler(RaystormError)
    async def refused(_request: Request, exc: RaystormError):
        return JSONResponse({"error": str(exc)}, status_code=400 if isinstance(exc, UsageError) else 422)

    s = get_session

    # --- the API ------------------------------------------------------------------------------------

    @app.get("/api/health")
    async def health() -> dict:
        session = s()
        return {"ok": True, "collection": session.collection,
                "sources": ["corpus", "web", "hybrid"] if session.web is not None else ["corpus"]}

    @app.get("/api/search")
    async def search(q: Question, k: K = 5, mode: SearchMode | None = None, source: Source = "corpus") -> list[dict]:
        return await s().search(q, k, mode, source=source)

    @app.post("/api/ask", responses={200: {"content": {"application/json": {}, "text/event-stream": {}}}})
    async def ask(body: AskRequest, request: Request):
        """The `ask --json` object; with `Accept: text/event-stream`, the searches and model steps as
        they happen, then that object (event `answer`)."""
        session = s()
        if body.collection != session.collection:
            raise UsageError(f"this server serves collection '{session.collection}', not '{body.collection}'")
        if "text/event-stream" in request.headers.get("accept", ""):
            async def events():
                async for event in session.ask_events(body.question, body.strategy, history_dicts(body.history),
                                                      body.source):
                    yield f"event: {event['event']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n"
            return StreamingResponse(events(), media_type="text/event-stream",
                                     headers={"cache-control": "no-cache", "x-accel-buffering": "no"})
        return await session.ask(body.question, body.strategy, history_dicts(body.history), source=body.source)

    @app.post("/api/reports")
    async def report_start(body: ReportRequest) -> dict:
        return {"run_id": s().report_start(body.topic, body.writer, body.personas, body.source)}

    @app.get("/api/reports")
    async def reports() -> list[dict]:
        return s().runs_list()

    @app.get("/api/reports/{run_id}")
    async def report_status(run_id: str, since: Since = 0) -> dict:
        return s().report_status(run_id, since)

    @app.get("/api/reports/{run_id}/result")
    async def report_result(run_id: str) -> dict:
        return s().report_result(run_id)

    @app.get("/api/reports/{run_id}/files/{name}")
    async def report_file(run_id: str, name: str) -> PlainTextResponse:
        session = s()
        path = session.inside(f"{run_id}/{name}", "file")
        if path.parent != session.inside(run_id, "run") or not path.is_file():
            raise UsageError(f"{name}: not a file of run {run_id}")
        return PlainTextResponse(path.read_text(encoding="utf-8", errors="replace"))

    @app.get("/api/reports/{run_id}/export", responses={200: {"content": {t: {} for t in MEDIA_TYPES.values()}}})
    async def report_export(run_id: str, format: Literal["md", "html", "docx", "pdf"] = "md") -> Response:
        """The finished report as a download: Markdown, standalone HTML, Word or PDF (`raystorm export`)."""
        folder = s().inside(run_id, "run")
        if folder.parent != s().runs:
            raise UsageError(f"{run_id}: not a run of this server")
        body = await asyncio.to_thread(export_bytes, folder, format)
        return Response(body, media_type=MEDIA_TYPES[format], headers={
            "content-disposition": f"attachment; filename=\"report.{format}\"; "
                                   f"filename*=UTF-8''{quote(folder.name)}.{format}"})

    @app.get("/api/reports/{run_id}/changes")
    async def report_changes(run_id: str) -> dict | None:
        """What changed since the previous run of this topic (changes.json), or null when none was kept."""
        return run_changes(s().inside(run_id, "run"))

    @app.get("/api/reports/{run_id}/source/{n}")
    async def source(run_id: str, n: Citation) -> dict:
        return s().source(run_id, n)

    @app.get("/api/reports/{run_id}/personas")
    async def personas(run_id: str) -> list[dict]:
        return s().personas(run_id)

    @app.post("/api/interview")
    async def interview(body: InterviewRequest) -> list[dict]:
        return await s().interview(body.run_id, body.question, body.persona)

    @app.get("/api/graph/locate")
    async def graph_locate(terms: Question, k: GraphK = 10) -> list[dict]:
        return s().graph_locate(terms, k)

    @app.get("/api/graph/expand")
    async def graph_expand(node: Name, edges: Annotated[str, Field(max_length=MAX_NAME)] | None = None,
                           hops: Hops = 1) -> dict:
        return s().graph_expand(node, [e for e in (edges or "").split(",") if e], hops)

    @app.get("/api/claims/{run_id}")
    async def claims_check(run_id: str) -> dict:
        return s().claims_check(run_id)

    # --- the pages ----------------------------------------------------------------------------------

    def page(request: Request, name: str, **context) -> HTMLResponse:
        sources = ["corpus", "web", "hybrid"] if s().web is not None else []  # a selector only where there is a choice
        return templates.TemplateResponse(request, name, {"collection": s().collection, "sources": sources,
                                                          **context})

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def home(request: Request):
        session = s()
        documents, graph = session.documents(), session.graph()
        if graph is not None:  # a document only some of whose sections are replaced says so
            from cluster.web.graph_view import document_states

            states = document_states(graph)
            documents = [{**d, "state": states.get(d.get("node"), d.get("state"))} for d in documents]
        return page(request, "home.html", documents=documents, runs=session.runs_list())

    @app.get("/report/{run_id}", response_class=HTMLResponse, include_in_schema=False)
    async def report_page(request: Request, run_id: str):
        session = s()
        status = session.report_status(run_id)
        result = session.report_result(run_id) if status["state"] == "done" else None
        return page(request, "report.html", run_id=run_id, status=status,
                    blocks=markdown_blocks(result["report"]) if result else [],
                    changes=run_changes(session.inside(run_id, "run")) if result else None)

    @app.get("/ask", response_class=HTMLResponse, include_in_schema=False)
    async def ask_page(request: Request):
        return page(request, "ask.html")

    @app.get("/interview/{run_id}", response_class=HTMLResponse, include_in_schema=False)
    async def interview_page(request: Request, run_id: str):
        return page(request, "interview.html", run_id=run_id, personas=s().personas(run_id))

    @app.get("/api/graph/drawing")
    async def graph_drawing_data() -> dict:
        """Every document (current, superseded, partly superseded, amended) and the typed edges between them."""
        from cluster.web.graph_view import graph_drawing

        return graph_drawing(s()._graph())

    @app.get("/graph", response_class=HTMLResponse, include_in_schema=False)
    async def graph_page(request: Request, node: str | None = None):
        session = s()
        return page(request, "graph.html", result=session.graph_expand(node) if node else None)

    from cluster.roundtable_faces import roundtable_router  # the roundtable's API and page

    app.include_router(roundtable_router(s, page))
    return app


def export_bytes(folder: Path, fmt: str) -> bytes:
    """The report of run `folder` exported as `fmt`, made in a temp folder (the run folder stays as it was)."""
    import tempfile

    from cluster.export import export_run

    with tempfile.TemporaryDirectory(prefix="raystorm-export-") as tmp:
        return export_run(folder, fmt, Path(tmp) / f"report.{fmt}").read_bytes()


def run_changes(folder: Path) -> dict | None:
    """changes.json of a run (what changed since the previous run of its topic), None when there is none."""
    from agents.wiki.changes import CHANGES_JSON, RunChanges
    from retrieval.saved import load_json

    path = folder / CHANGES_JSON
    return load_json(path, RunChanges, "rerun the report").model_dump(mode="json") if path.is_file() else None


def markdown_blocks(markdown: str) -> list[dict]:
    """report.md as blocks a template renders safely: headings, and paragraphs split into text and [n]."""
    import re

    blocks = []
    for chunk in re.split(r"\n\s*\n", markdown.strip()):
        chunk = chunk.strip()
        heading = re.match(r"^(#{1,3})\s+(.*)$", chunk)
        if heading and "\n" not in chunk:
            blocks.append({"kind": f"h{len(heading.group(1))}", "text": heading.group(2)})
            continue
        parts = []
        for piece in re.split(r"(\[\d+\])", chunk):
            number = re.fullmatch(r"\[(\d+)\]", piece)
            if piece:
                parts.append({"cite": int(number.group(1))} if number else {"text": piece})
        blocks.append({"kind": "p", "parts": parts})
    return blocks

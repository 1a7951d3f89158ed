"""`raystorm web` as a user meets it: the command started as a process (Ray Serve on local Ray), its
pages driven in Debian's chromium through Playwright, its API read with httpx.

Screenshots of each page go to $RAYSTORM_SCREENSHOTS (default: the test's temp folder)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from test_cli_errors import EXAMPLE_DIR, RAYSTORM, raystorm

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
TOKEN = "web-test-token"
TOPIC = "Flood rider waiting period"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    """The bundled corpus ingested, one report written, and `raystorm web` up with a token."""
    root = tmp_path_factory.mktemp("web")
    shutil.copytree(EXAMPLE_DIR, root / "corpus")
    for args in (["ingest", "corpus", "-c", "ex", "-q"], ["report", TOPIC, "-c", "ex", "--out", "runs"]):
        done = raystorm(root, *args)
        assert done.returncode == 0, done.stderr[-2000:]
    (run_id,) = [p.name for p in (root / "runs").iterdir()]
    edited = change_the_corpus(root, root / "runs" / run_id)
    for args in (["ingest", "corpus", "-c", "ex", "-q"], ["report", TOPIC, "-c", "ex", "--out", "runs"]):
        done = raystorm(root, *args)  # the topic again, into the same folder: changes.md
        assert done.returncode == 0, done.stderr[-2000:]
    port = free_port()
    env = {**os.environ, "RAYSTORM_HOME": str(root / "home"), "RAYSTORM_WEB_TOKEN": TOKEN}
    server = subprocess.Popen([RAYSTORM, "web", "-c", "ex", "--runs", str(root / "runs"), "--port", str(port)],
                              cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        try:
            if httpx.get(f"{url}/api/health", headers=auth(), timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            os.killpg(server.pid, signal.SIGKILL)
            pytest.fail(f"raystorm web did not come up: {server.stdout.read()[-3000:]}")
        time.sleep(1)
    yield {"url": url, "root": root, "run_id": run_id, "edited": edited}
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)


RENTERS_BULLETIN = """---
title: "Bulletin 2025-02: Renters Deductible"
url: https://docs.harborline.example/bulletins/2025-02
---
# Bulletin 2025-02: Renters Deductible

**Effective:** May 1, 2025
**Supersedes:** Section 6 of Bulletin 2021-04

## Rule 1. Renters deductible

The base deductible for form RP-1 is $750 per occurrence.
"""


def change_the_corpus(root: Path, run: Path) -> str:
    """After the first report: one line it cites edited in place, and Bulletin 2021-04 superseded in part.
    Returns the claim whose line was edited."""
    claims = json.loads((run / "report.claims.json").read_text())["claims"]
    def line_of(c: dict) -> str:
        return Path(c["evidence"][0]["path"]).read_text().splitlines()[c["evidence"][0]["line_start"] - 1]

    one_line = [c for c in claims if c["text"].endswith(".") and len(c["evidence"]) == 1
                and c["evidence"][0]["line_start"] == c["evidence"][0]["line_end"] and c["text"][:-1] in line_of(c)]
    # away from the waiting period's own lines, which the ask test and its screenshot read
    claim = next((c for c in one_line if "waiting" not in c["text"].lower()), one_line[0])
    path = Path(claim["evidence"][0]["path"])
    lines = path.read_text().splitlines(keepends=True)
    i = claim["evidence"][0]["line_start"] - 1
    assert claim["text"][:-1] in lines[i]
    lines[i] = lines[i].replace(claim["text"][:-1], claim["text"][:-1] + ", as restated in 2025", 1)
    path.write_text("".join(lines))
    (root / "corpus" / "bulletin-2025-02-renters-deductible.md").write_text(RENTERS_BULLETIN)
    return claim["text"]


def auth() -> dict:
    return {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, web):
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    page.goto(f"{web['url']}/?token={TOKEN}")  # the token once; a cookie carries it on
    yield page
    context.close()


def shot(page, name: str, tmp_path: Path) -> None:
    folder = Path(os.environ.get("RAYSTORM_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"))


def test_a_citation_opens_its_source_lines_highlighted(page, web, tmp_path):
    shot(page, "home", tmp_path)
    assert page.locator("#runs a", has_text=TOPIC).count() == 1
    page.goto(f"{web['url']}/report/{web['run_id']}")
    cite = page.locator("a.cite").first
    n = int(cite.get_attribute("data-n"))
    cite.click()
    page.wait_for_selector(".line.cited")
    shot(page, "report", tmp_path)
    refs = json.loads((web["root"] / "runs" / web["run_id"] / "url_to_info.json").read_text())["citations"]
    snippet = next(c for c in refs if c["index"] == n)["snippets"][0]
    file_lines = Path(snippet["path"]).read_text().splitlines()
    first = page.locator(".snippet").first
    shown = [line.get_attribute("data-line") for line in first.locator(".line.cited").all()]
    assert shown == [str(i) for i in range(snippet["line_start"], snippet["line_end"] + 1)]
    text = first.locator(".line.cited .text").first.inner_text()
    assert text == file_lines[snippet["line_start"] - 1]
    assert first.locator(".badge.ok, .badge.stale").count() == 1
    assert first.locator(".badge.current, .badge.superseded, .badge.amended").count() == 1


WATCH_ORDER = """() => {
  window.seen = [];
  const note = (what) => { if (!window.seen.includes(what)) window.seen.push(what); };
  new MutationObserver(() => {
    if (document.querySelector(".hop")) note("hop");
    if (document.querySelector(".answer .short")) note("answer");
    if (document.querySelector(".hops[data-done]")) note("done");
  }).observe(document.getElementById("dialogue"), {subtree: true, childList: true, attributes: true});
}"""


def test_ask_shows_the_answer_first_and_how_it_was_found_folded(page, web, tmp_path):
    page.goto(f"{web['url']}/ask")
    page.evaluate(WATCH_ORDER)
    page.fill("input[name=question]", "What is the current waiting period for the Flood Rider?")
    page.click("button[type=submit]")
    page.wait_for_selector(".answer.pending")  # the answer's place is at the top from the start
    page.wait_for_selector(".hops[data-done]", state="attached", timeout=120_000)
    # hops streamed in as they were made; the answer showed before the list of them was complete
    assert page.evaluate("window.seen") == ["hop", "answer", "done"]
    assert "14 days" in page.locator(".answer .short").inner_text()
    assert "confidence" in page.locator(".answer .confidence").inner_text()
    assert page.locator(".answer .citations li").count() >= 1
    turn = page.locator(".turn").first
    assert turn.locator(":scope > .answer + details.how").count() == 1  # answer above, trace below it
    assert page.locator("details.how").get_attribute("open") is None  # folded
    page.click("details.how summary")
    hops = page.locator(".hop").all_inner_texts()
    assert hops and any(h.startswith("Searched for “") and "found" in h and "passage" in h for h in hops)
    assert not any(word in h for h in hops for word in ("multihop.", "intermediate_answer", "follow_up"))
    shot(page, "ask", tmp_path)
    # the API: the same object at the end of the stream as without it
    body = {"collection": "ex", "question": "What is the current waiting period for the Flood Rider?"}
    with httpx.stream("POST", f"{web['url']}/api/ask", json=body, timeout=120,
                      headers={**auth(), "accept": "text/event-stream"}) as reply:
        events = [json.loads(line[6:]) for line in reply.iter_lines() if line.startswith("data: ")]
    plain = httpx.post(f"{web['url']}/api/ask", json=body, headers=auth(), timeout=120).json()
    assert [e["event"] for e in events][-1] == "answer" and len(events) > 2
    assert events[-1]["short_answer"] == plain["short_answer"]


def test_an_interview_answers_in_character(page, web, tmp_path):
    page.goto(f"{web['url']}/interview/{web['run_id']}")
    page.fill("input[name=question]", "What is the waiting period?")
    page.click("button[type=submit]")
    page.wait_for_selector(".answer", timeout=120_000)
    assert page.locator(".answer").count() >= 1
    shot(page, "interview", tmp_path)


def test_the_report_page_offers_each_export_and_the_api_serves_it(page, web):
    page.goto(f"{web['url']}/report/{web['run_id']}")
    hrefs = [a.get_attribute("href") for a in page.locator("a.download").all()]
    assert hrefs == [f"/api/reports/{web['run_id']}/export?format={f}" for f in ("pdf", "docx", "html", "md")]
    magic = {"pdf": b"%PDF-", "docx": b"PK", "html": b"<!doctype html>", "md": f"# {TOPIC}".encode()}
    for fmt, start in magic.items():
        reply = httpx.get(f"{web['url']}{hrefs[0].replace('=pdf', '=' + fmt)}", headers=auth(), timeout=120)
        assert reply.status_code == 200 and reply.content.startswith(start), (fmt, reply.text[:200])
        assert reply.headers["content-disposition"].startswith("attachment;")
    assert httpx.get(f"{web['url']}/api/reports/{web['run_id']}/export?format=exe", headers=auth(),
                     timeout=10).status_code == 422


def test_the_report_page_shows_what_changed_since_the_previous_run(page, web, tmp_path):
    page.goto(f"{web['url']}/report/{web['run_id']}")
    panel = page.locator("#changes")
    changed = panel.locator("li.change.changed")
    assert changed.count() >= 1
    first = changed.first.inner_text()
    assert web["edited"][:-1] in first and "as restated in 2025" in first  # was ... now ..., both citations
    assert panel.locator("li", has_text="Bulletin 2025-02: Renters Deductible").count() == 1
    assert "Section 6. Renters deductible" in panel.inner_text()
    panel.scroll_into_view_if_needed()
    shot(page, "changes", tmp_path)
    assert httpx.get(f"{web['url']}/api/reports/{web['run_id']}/changes", headers=auth(),
                     timeout=10).json()["superseded"][0]["by"][0]["scope"] == "Section 6. Renters deductible"


def test_the_graph_is_drawn_and_a_partly_superseded_document_says_so(page, web, tmp_path):
    row = page.locator("tr", has_text="Bulletin 2021-04")
    assert row.locator(".badge").inner_text() == "partly superseded"  # sections 4-6 replaced, 1-3 in force
    page.goto(f"{web['url']}/graph")
    page.wait_for_selector("#graph-canvas[data-drawn]", timeout=30_000)
    drawing = httpx.get(f"{web['url']}/api/graph/drawing", headers=auth(), timeout=30).json()
    assert page.locator("#graph-canvas").get_attribute("data-drawn") == str(len(drawing["nodes"]))
    titles = {n["id"]: n["title"] for n in drawing["nodes"]}
    supersedes = {(titles[e["source"]][:15], titles[e["target"]][:15]) for e in drawing["edges"]
                  if e["type"] == "supersedes"}
    assert ("Bulletin 2022-1", "Bulletin 2021-0") in supersedes and ("Bulletin 2025-0", "Bulletin 2021-0") in supersedes
    assert page.evaluate("document.querySelector('#graph-canvas canvas') !== null")  # drawn, not a table
    shot(page, "graph", tmp_path)


def test_the_api_refuses_without_the_token_and_outside_the_runs(web, tmp_path):
    url = web["url"]
    assert httpx.get(f"{url}/api/health", timeout=10).status_code == 401
    assert httpx.get(f"{url}/api/health", headers={"authorization": "Bearer wrong"}, timeout=10).status_code == 401
    schema = httpx.get(f"{url}/openapi.json", headers=auth(), timeout=10).json()
    assert {"/api/health", "/api/ask", "/api/search", "/api/reports"} <= set(schema["paths"])
    runs = web["root"] / "runs"
    forged = runs / "forged"
    shutil.copytree(runs / web["run_id"], forged)
    info = json.loads((forged / "url_to_info.json").read_text())
    info["citations"][0]["snippets"][0]["path"] = "/etc/passwd"
    (forged / "url_to_info.json").write_text(json.dumps(info))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOPSECRET-CONTENT\n")
    os.symlink(outside, runs / "linked")
    n = info["citations"][0]["index"]
    for path in (f"/api/reports/forged/source/{n}", "/api/reports/linked/files/secret.txt",
                 "/api/reports/..%2F..%2F..%2Fetc/files/passwd", f"/api/reports/{web['run_id']}/files/..%2F..%2Fhome",
                 "/api/claims/%2Fetc"):
        reply = httpx.get(f"{url}{path}", headers=auth(), timeout=10)
        assert reply.status_code in (400, 404), (path, reply.status_code, reply.text[:200])
        assert "root:x:0" not in reply.text and "TOPSECRET-CONTENT" not in reply.text

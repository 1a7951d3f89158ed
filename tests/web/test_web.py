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
    yield {"url": url, "root": root, "run_id": run_id}
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)


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


def test_ask_streams_its_hops_before_the_answer(page, web, tmp_path):
    page.goto(f"{web['url']}/ask")
    page.fill("input[name=question]", "What is the current waiting period for the Flood Rider?")
    page.click("button[type=submit]")
    page.wait_for_selector(".hop")
    assert page.locator(".answer").count() == 0  # the hops came first, as they were made
    page.wait_for_selector(".answer", timeout=120_000)
    assert "14 days" in page.locator(".answer .short").inner_text()
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

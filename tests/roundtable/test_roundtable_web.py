"""The roundtable page of `raystorm web` in Debian's chromium through Playwright: start a roundtable, send a
message, see the reply stream in and the mind map gain a concept, open a citation's lines, let it run two turns.

The screenshot goes to $RAYSTORM_SCREENSHOTS (default: the test's temp folder); docs/screenshots/roundtable.png
is this test's, run with RAYSTORM_SCREENSHOTS=docs/screenshots."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support.http_probe import free_port

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
TOPIC = "Harborline Mutual flood coverage"
STEER = "What is the waiting period of the flood rider?"


@pytest.fixture(scope="module")
def web(settings):
    """`raystorm web` on the data dir the other roundtable tests use (after them: it owns the store while up)."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "cluster.cli", "web", "-c", "example", "--port", str(port)],
                              cwd=ROOT, env={**os.environ, "RAYSTORM_HOME": settings.data_dir},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            os.killpg(server.pid, signal.SIGKILL)
            pytest.fail(f"raystorm web did not come up: {server.stdout.read()[-3000:]}")
        time.sleep(0.5)
    yield url
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)


def test_a_roundtable_in_the_browser(web, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(f"{web}/roundtable")
            page.fill("#roundtable-new input[name=topic]", TOPIC)
            page.click("#roundtable-new button[type=submit]")
            page.wait_for_url("**/roundtable/*")
            # the warm start streams in: its turns, then the mind map
            page.wait_for_selector("#discussion li.warm", timeout=60_000)
            page.wait_for_selector("#mindmap details", timeout=60_000)
            page.wait_for_function("document.getElementById('rt-state').textContent === 'ready'", timeout=60_000)
            before = set(page.eval_on_selector_all("#mindmap details", "ds => ds.map(d => d.dataset.node)"))
            page.fill("#rt-say input[name=message]", STEER)
            page.click("#rt-say button[name=send]")
            page.wait_for_selector("#discussion li.user", timeout=30_000)
            reply = page.wait_for_selector("#discussion li.user + li.expert", timeout=60_000)
            assert "waiting period" in reply.inner_text().lower()
            assert page.inner_text("#discussion li.user").endswith(STEER)
            page.wait_for_function(
                "n => document.querySelectorAll('#mindmap details').length > n", arg=len(before), timeout=60_000)
            after = set(page.eval_on_selector_all("#mindmap details", "ds => ds.map(d => d.dataset.node)"))
            assert after > before
            assert page.locator("#mindmap summary.new").count() >= 1
            # the reply's first citation opens its lines, as on the report page
            reply.query_selector("a.cite").click()
            page.wait_for_selector("#source-body .snippet .line.cited", timeout=15_000)
            assert "lines" in page.inner_text("#source-body .path")
            # and a mind-map snippet opens its own
            page.locator("#mindmap ul.snips a.cite").first.click()
            page.wait_for_selector("#source-body .snippet .line.cited", timeout=15_000)
            # nobody at the keyboard for two turns: both stream in
            said = page.locator("#discussion li").count()
            page.fill("#rt-observe-turns", "2")
            page.click("#rt-observe")
            page.wait_for_function("n => document.querySelectorAll('#discussion li').length >= n", arg=said + 2,
                                   timeout=60_000)
            page.wait_for_function("document.getElementById('rt-state').textContent === 'ready'", timeout=60_000)
            shots = Path(os.environ.get("RAYSTORM_SCREENSHOTS") or tmp_path)
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / "roundtable.png"), full_page=True)
        finally:
            browser.close()


def test_the_stream_sends_each_turn_as_it_is_said(web):
    """GET /api/roundtables/{id}/stream: server-sent events, one `data:` object at once and one as turns come."""
    import json

    started = httpx.post(f"{web}/api/roundtables", json={"topic": TOPIC}, timeout=60).json()
    stream_url = f"{web}/api/roundtables/{started['id']}/stream"
    with httpx.stream("GET", stream_url, timeout=120) as reply:
        assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/event-stream")
        updates = (json.loads(line[len("data: "):]) for line in reply.iter_lines() if line.startswith("data: "))
        got = next(updates)
        while got["state"] != "ready":  # the warm start streams in
            got = next(updates)
        warm = got["next"]
        assert warm > 0
        assert httpx.post(f"{stream_url.rsplit('/', 1)[0]}/turn", json={"message": STEER}, timeout=30).status_code == 200
        said = []
        while not (got["state"] == "ready" and any(u["role"] == "expert" for u in said)):
            got = next(updates)
            said += [e["utterance"] for e in got["events"] if e["kind"] == "utterance"]
    assert [u["role"] for u in said[:2]] == ["user", "expert"] and said[0]["text"] == STEER
    assert said[1]["focus"] == STEER and said[1]["cited"]
    # an unknown session is refused before any stream starts, in the line the events route gives
    unknown = httpx.get(f"{web}/api/roundtables/no-such-session/stream", timeout=30)
    assert unknown.status_code == 400 and "no roundtable session 'no-such-session'" in unknown.text

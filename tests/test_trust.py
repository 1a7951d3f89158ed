"""What a careless or hostile user meets, as real processes: nothing outside the corpus gets in or is
read, no traceback for a bad file or a bad server, no hang.

Each scenario runs the installed `raystorm` with a fresh RAYSTORM_HOME (see test_cli_errors.py)."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from test_cli_errors import EXAMPLE_DIR, FILES, raystorm

SECRET = "OPENAI_API_KEY=sk-trust-test-4b1d"
HOSTILE = "<script>alert(1)</script> Flood Rider [x](javascript:alert(2))"


def one_clean_line(done: subprocess.CompletedProcess, code: int, words: str) -> None:
    assert done.returncode == code, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert words in done.stderr, done.stderr[-2000:]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A corpus `C` (three example documents, links leading out of it, one 1 MB line), a secret file and
    folder beside it, an ingested collection `t` and one finished report run."""
    root = tmp_path_factory.mktemp("trust")
    (root / "outside").mkdir()
    (root / "outside" / "creds.txt").write_text(f"{SECRET}\n")
    (root / "outside" / "folder").mkdir()
    (root / "outside" / "folder" / "notes.md").write_text(f"# Notes\n\n{SECRET} flood deductible\n")
    corpus = root / "C"
    corpus.mkdir()
    for name in FILES:
        shutil.copy(EXAMPLE_DIR / name, corpus / name)
    os.symlink(root / "outside" / "creds.txt", corpus / "notes.txt")
    os.symlink(root / "outside" / "folder", corpus / "linked")
    os.symlink(corpus / FILES[0], corpus / "alias.md")  # inside, pointing inside: fine
    (corpus / "long.txt").write_text(("flood coverage waiting period words " * 30_000).strip() + "\n")
    form = corpus / "flood-rider-form-fr-12.md"  # cited by the flood rider report: its title turns hostile
    form.write_text(form.read_text().replace("title: Flood Rider (Form FR-12)\nurl: https://docs.harborline."
                                             "example/forms/fr-12", f"title: {HOSTILE}\nurl: javascript:alert(3)"))
    done = raystorm(root, "ingest", "C", "-c", "t", "-q")
    assert done.returncode == 0, done.stderr
    return root, done


def test_links_out_of_the_corpus_are_reported_and_never_read(site):
    root, done = site
    assert "notes.txt: symbolic link to a file outside" in done.stderr
    assert "linked: symbolic link to a folder outside" in done.stderr
    assert "alias.md" not in done.stderr  # a link inside to inside is read (as its target)
    found = raystorm(root, "search", "OPENAI_API_KEY sk-trust-test", "-c", "t", "-k", "20", "--json")
    assert found.returncode == 0, found.stderr
    assert "sk-trust-test" not in found.stdout
    assert all(str(root / "outside") not in h["path"] for h in json.loads(found.stdout))


def test_a_file_that_became_a_link_out_is_pruned(tmp_path):
    corpus = tmp_path / "C"
    corpus.mkdir()
    (corpus / "a.txt").write_text("The flood rider waiting period is thirty days.\n")
    (tmp_path / "secret.txt").write_text(f"{SECRET}\n")
    assert raystorm(tmp_path, "ingest", "C", "-c", "p", "-q").returncode == 0
    (corpus / "a.txt").unlink()
    os.symlink(tmp_path / "secret.txt", corpus / "a.txt")
    (corpus / "b.txt").write_text("Another document about hail.\n")
    done = raystorm(tmp_path, "ingest", "C", "-c", "p", "-q", "--prune")
    assert done.returncode == 0, done.stderr
    assert "1 deleted files pruned" in done.stdout
    found = raystorm(tmp_path, "search", "flood rider waiting period secret key", "-c", "p", "--json")
    paths = {h["path"] for h in json.loads(found.stdout)}
    assert paths == {str((corpus / "b.txt").resolve())}


def test_a_one_megabyte_line_is_cut_to_the_passage_size_with_its_character_span(site):
    root, _ = site
    found = raystorm(root, "search", "flood coverage waiting period", "-c", "t", "-k", "5", "--json")
    hits = [h for h in json.loads(found.stdout) if h["path"].endswith("long.txt")]
    assert hits, found.stdout[:500]
    line = (root / "C" / "long.txt").read_text().splitlines()[0]
    for p in hits:
        assert len(p["text"].split()) <= 180
        assert (p["line_start"], p["line_end"]) == (1, 1)
        assert line[p["char_start"]:p["char_end"]] == p["text"]
    shown = raystorm(root, "search", "flood coverage waiting period", "-c", "t", "-k", "5")
    assert "long.txt:1-1, chars " in shown.stdout


@pytest.fixture(scope="module")
def run_dir(site):
    root, _ = site
    done = raystorm(root, "report", "Flood rider waiting period", "-c", "t", "--out", "runs")
    assert done.returncode == 0, done.stderr[-2000:]
    (folder,) = (root / "runs").iterdir()
    return folder


@pytest.mark.parametrize("body,words", [
    ('[{"persona": {"name": "A', "not valid JSON"),
    ("null", "unexpected content at the top level"),
    ("[1, 2]", "unexpected content at [0]"),
    ("[]", "lists no conversations, though personas.json has"),
])
def test_a_tampered_conversation_log_is_one_line_naming_it(site, run_dir, body, words):
    root, _ = site
    log = run_dir / "conversation_log.json"
    saved = log.read_bytes()
    try:
        log.write_text(body)
        done = raystorm(root, "interview", str(run_dir), "What is the waiting period?")
        one_clean_line(done, 1, words)
        assert "conversation_log.json" in done.stderr
    finally:
        log.write_bytes(saved)


def test_a_damaged_stage_file_is_made_again_on_the_rerun(site, run_dir):
    root, _ = site
    (run_dir / "conversation_log.json").write_text('[{"persona"')
    done = raystorm(root, "report", "Flood rider waiting period", "-c", "t", "--out", "runs")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "conversations: redone:" in done.stderr and "not valid JSON" in done.stderr
    assert json.loads((run_dir / "conversation_log.json").read_text())


def test_metadata_goes_into_report_md_as_text(run_dir):
    refs = (run_dir / "report.md").read_text().split("## References")[1]
    assert "&lt;script&gt;alert(1)&lt;/script&gt; Flood Rider \\[x\\](javascript:alert(2))" in refs  # as text
    assert "<script>" not in refs and not re.search(r"(?<!\\)\]\(javascript:", refs)  # no live link
    assert "<javascript" not in refs and "](javascript:alert(3)" not in refs


def test_claims_outside_the_corpus_are_never_opened(site, run_dir, tmp_path):
    root, _ = site
    secret = root / "outside" / "creds.txt"
    digest = hashlib.sha256(SECRET.encode()).hexdigest()  # a guessed line hash: right
    sidecar = json.loads((run_dir / "report.claims.json").read_text())
    assert sidecar["roots"] == [str((root / "C").resolve())]
    first = sidecar["claims"][0]["evidence"][0]
    forged = [dict(first, path=str(secret), line_start=1, line_end=1, sha256=digest),
              dict(first, path=str(root / "C" / ".." / "outside" / "creds.txt"), line_start=1, line_end=1,
                   sha256=digest),
              dict(first, path="/etc/passwd", line_start=1, line_end=1, sha256=digest)]
    sidecar["claims"] = [dict(sidecar["claims"][0], id=f"f{i}", evidence=[ev]) for i, ev in enumerate(forged)]
    (tmp_path / "forged.claims.json").write_text(json.dumps(sidecar))
    done = raystorm(root, "wiki", "check", str(tmp_path), "--json")
    report = json.loads(done.stdout)
    assert [c["state"] for c in report["claims"]] == ["unresolved"] * 3
    assert all(e["reason"] == "outside the corpus" for c in report["claims"] for e in c["evidence"])
    assert report["files_read"] == 0


class JunkLLM(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible server that answers every chat completion wrongly, as `mode` says."""

    mode = "html"
    BODIES = {
        "html": ("text/html", "<html><body><h1>Welcome to nginx!</h1></body></html>"),
        "no_choices": ("application/json", '{"id": "x", "object": "chat.completion", "choices": []}'),
        "no_message": ("application/json", '{"id": "x", "object": "chat.completion", "created": 1, "model": "m", '
                                            '"choices": [{"index": 0, "finish_reason": "stop"}]}'),
        "null_content": ("application/json", '{"id": "x", "object": "chat.completion", "created": 1, "model": "m", '
                                              '"choices": [{"index": 0, "finish_reason": "stop", "message": '
                                              '{"role": "assistant", "content": null}}], "usage": '
                                              '{"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1}}'),
        "error_200": ("application/json", '{"error": {"message": "model overloaded", "type": "server_error"}}'),
        "truncated": ("application/json", '{"id": "x", "object": "chat.completion", "choices": [{"ind'),
    }

    def do_POST(self):  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("content-length") or 0))
        kind, body = self.BODIES[self.path.strip("/").split("/")[0]]
        data = body.encode()
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def junk_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), JunkLLM)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.mark.parametrize("mode", sorted(JunkLLM.BODIES))
def test_a_junk_reply_from_the_llm_server_is_a_typed_error_or_a_fallback(site, junk_server, mode):
    root, _ = site
    done = raystorm(root, "ask", "What is the flood rider waiting period?", "-c", "t", "--strategy", "naive",
                    "--llm", "junk", "--llm-base-url", f"{junk_server}/{mode}/v1", "--llm-retries", "1",
                    "--no-llm-cache", env={"RAYSTORM_LLM_API_KEY": "x"})
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    if mode == "null_content":  # a well-formed empty reply: repaired, then the extractive fallback
        assert done.returncode == 0, done.stderr[-2000:]
    else:
        one_clean_line(done, 1, "the reply is not an OpenAI chat completion")


def test_an_unreachable_ray_address_fails_at_once_naming_it(site):
    root, _ = site
    done = raystorm(root, "report", "Flood", "-c", "t", "--out", "runs-x", "--address", "127.0.0.1:1")
    one_clean_line(done, 1, "no Ray cluster answers at 127.0.0.1:1")


def test_a_full_disk_is_one_line_and_the_rerun_resumes(tmp_path):
    full = tmp_path / "full"
    full.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(full)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        shutil.copytree(EXAMPLE_DIR, tmp_path / "C")
        done = raystorm(tmp_path, "ingest", "C", "-c", "f", "-q", home=full / "home")
        one_clean_line(done, 1, f"no space left on the disk holding {full}")
        assert "rerun the same command" in done.stderr
        subprocess.run(["mount", "-o", "remount,size=128m", str(full)], check=True)
        again = raystorm(tmp_path, "ingest", "C", "-c", "f", "-q", home=full / "home")
        assert again.returncode == 0, again.stderr[-2000:]
        assert " unchanged" in again.stdout and "(0 added" not in again.stdout
    finally:
        subprocess.run(["umount", "-l", str(full)], capture_output=True)

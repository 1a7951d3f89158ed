"""Office files that unpack to far more than they weigh: refused before any parser reads them.

The bomb is built here with zipfile streaming (1 GB of one byte, deflated to about 1 MB), so the test costs
the compression of that gigabyte once, never its memory. The ingest runs as `raystorm ingest`, a real
process, under a parent that reports the peak RSS of that process alone (`run_measured`)."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from retrieval.readers import extract
from retrieval.readers.lines import Unreadable
from retrieval.readers.zipguard import ZipLimits, check_archive, limits_from_env
from test_cli_errors import RAYSTORM, raystorm
from tests.retrieval.office_files import write_bomb, write_docx, write_pptx, write_xlsx
from tests.support.http_probe import run_measured

def lie_about_size(path: Path, member: str, declared: int) -> None:
    """Rewrite `member`'s uncompressed size in the central directory (what zipfile trusts) to `declared`."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    at = data.rfind(b"PK\x01\x02")
    while at >= 0:
        n = struct.unpack_from("<H", data, at + 28)[0]
        if data[at + 46: at + 46 + n] == name:
            struct.pack_into("<I", data, at + 24, declared)
            path.write_bytes(bytes(data))
            return
        at = data.rfind(b"PK\x01\x02", 0, at)
    raise AssertionError(f"{member} not in the central directory")


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> Path:
    return write_bomb(tmp_path_factory.mktemp("bomb") / "bomb.docx", "word/document.xml", 1024)


def test_a_bomb_docx_beside_a_normal_file_is_skipped_with_one_line(tmp_path, bomb):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "bomb.docx").write_bytes(bomb.read_bytes())
    write_docx(corpus / "normal.docx", [("p", "The lighthouse keeper logs the tide at dawn every day.")])
    assert (corpus / "bomb.docx").stat().st_size < 8 * 2**20
    report = run_measured([RAYSTORM, "ingest", "corpus", "-c", "z"], tmp_path,
                          {**os.environ, "RAYSTORM_HOME": str(tmp_path / "home")})
    assert report.rc == 0, report.err[-2000:]
    skipped = [line for line in report.err.splitlines() if "bomb.docx" in line]
    assert len(skipped) == 1 and "zip bomb" in skipped[0], report.err
    assert "1 documents" in report.out and "1 skipped" in report.out, report.out
    assert report.peak_mb < 500, report  # figures, and the same ingest without the bomb: scripts/probe_faces.py
    found = raystorm(tmp_path, "search", "lighthouse keeper tide", "-c", "z", "--json")
    assert found.returncode == 0 and "normal.docx" in found.stdout, found.stderr


@pytest.mark.parametrize("suffix,member", [(".xlsx", "xl/worksheets/sheet1.xml"), (".pptx", "ppt/slides/slide1.xml")])
def test_bombs_of_every_office_format_are_unreadable(tmp_path, suffix, member):
    path = write_bomb(tmp_path / f"bomb{suffix}", member, 64)  # over the ratio bound, under the size bounds
    with pytest.raises(Unreadable, match="inflates .* times"):
        extract(path)


def test_the_bounds_per_part_and_per_file(tmp_path):
    path = write_bomb(tmp_path / "big.docx", "word/document.xml", 8)
    with pytest.raises(Unreadable, match="bound per part"):
        check_archive(path, ZipLimits(member_mb=4, max_ratio=10**6))
    with pytest.raises(Unreadable, match="bound per file"):
        check_archive(path, ZipLimits(member_mb=64, file_mb=4, max_ratio=10**6))
    check_archive(path, ZipLimits(member_mb=64, file_mb=64, max_ratio=10**6))  # within every bound: read


def test_a_header_that_lies_about_its_size_is_caught_by_what_it_inflates_to(tmp_path):
    path = write_bomb(tmp_path / "liar.docx", "word/document.xml", 32)
    lie_about_size(path, "word/document.xml", 4096)  # says 4 KB: passes every declared bound
    with pytest.raises(Unreadable, match="not the 4,096 its header says|damaged|corrupt"):
        check_archive(path, ZipLimits())
    with pytest.raises(Unreadable):
        extract(path)


def test_real_office_files_pass(tmp_path):
    for path in (write_docx(tmp_path / "a.docx", [("p", "hello")]),
                 write_pptx(tmp_path / "a.pptx", [{"title": "T", "bullets": ["x"]}]),
                 write_xlsx(tmp_path / "a.xlsx", {"S": [["h"], ["v"]]})):
        check_archive(path, ZipLimits())


def test_limits_from_the_environment(monkeypatch):
    monkeypatch.setenv("RAYSTORM_OFFICE_LIMITS", "member_mb=512,max_ratio=300")
    assert limits_from_env() == ZipLimits(member_mb=512, max_ratio=300)
    monkeypatch.setenv("RAYSTORM_OFFICE_LIMITS", "members_mb=1")
    with pytest.raises(ValueError, match="RAYSTORM_OFFICE_LIMITS"):
        limits_from_env()

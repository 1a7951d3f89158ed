"""Bounds on what an Office file (.docx, .xlsx, .pptx: a zip of XML parts) may unpack to, checked first.

An Office file is a zip, and a zip may be a bomb: a 2.7 MB .docx whose `word/document.xml` inflates to
1 GB. The libraries that parse these formats read a part whole (python-docx, python-pptx) or stream it
(openpyxl) with no bound, so before any of them sees the file, `check_archive`:
- reads every member's declared uncompressed size and refuses a member over `member_mb`, a file whose
  members add up to over `file_mb`, or a member that declares more than `max_ratio` times its compressed
  size (a well-formed Office part rarely passes 50; a bomb is in the thousands);
- then inflates each member through a bounded stream (1 MB at a time, nothing kept), so a member whose
  header lies about its size is caught by what it actually inflates to: more than its header says, or
  than the bounds allow, and the file is refused.
A refused file raises `Unreadable` with one line, so the ingest skips it and goes on with the folder.
"""

from __future__ import annotations

import os
import zipfile
import zlib
from pathlib import Path

from pydantic import BaseModel, Field

from retrieval.readers.lines import Unreadable

_CHUNK = 2**20
_RATIO_FLOOR = 2**20  # members smaller than this may compress as well as they like: they cannot hurt
ENV = "RAYSTORM_OFFICE_LIMITS"  # e.g. "member_mb=512,file_mb=2048,max_ratio=200"


class ZipLimits(BaseModel):
    """How large an Office file may unpack to (the defaults hold real documents of hundreds of pages and
    workbooks of a million cells)."""

    member_mb: float = Field(256, gt=0, description="the largest one part (e.g. word/document.xml) may inflate to")
    file_mb: float = Field(1024, gt=0, description="the largest all parts together may inflate to")
    max_ratio: float = Field(100, gt=1, description="the most a part of 1 MB or more may inflate per byte stored")
    members: int = Field(10_000, ge=1, description="the most parts a file may have")


def limits_from_env() -> ZipLimits:
    """The limits, with any set in $RAYSTORM_OFFICE_LIMITS ("member_mb=512,file_mb=2048")."""
    given = os.environ.get(ENV, "").strip()
    if not given:
        return ZipLimits()
    pairs = dict(item.split("=", 1) for item in given.split(",") if "=" in item)
    unknown = set(pairs) - set(ZipLimits.model_fields)
    if unknown or len(pairs) != len([i for i in given.split(",") if i.strip()]):
        raise ValueError(f"${ENV}={given!r}: expected NAME=NUMBER,... with names from "
                         f"{', '.join(ZipLimits.model_fields)}")
    return ZipLimits.model_validate(pairs)


def _mb(n: int) -> str:
    return f"{n / 2**20:,.0f} MB" if n >= 2**20 else f"{n:,} bytes"


def check_archive(path: Path, limits: ZipLimits | None = None) -> None:
    """Raise `Unreadable` (one line) if the Office file at `path` would unpack past `limits`; a file that is
    no zip at all raises `zipfile.BadZipFile`, for the reader to say what it is."""
    limits = limits or limits_from_env()
    member_max, file_max = int(limits.member_mb * 2**20), int(limits.file_mb * 2**20)
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if len(infos) > limits.members:
                raise Unreadable(f"a zip of {len(infos):,} parts (over {limits.members:,}): skipped as a possible zip bomb")
            total = 0
            for info in infos:
                _check_declared(info, member_max, limits.max_ratio)
                total += info.file_size
                if total > file_max:
                    raise Unreadable(f"its parts unpack to over {_mb(file_max)} (the bound per file): skipped as "
                                     f"a possible zip bomb; raise it with ${ENV}=file_mb=N")
            for info in infos:
                _check_actual(archive, info, member_max)
    except (zlib.error, NotImplementedError, EOFError) as exc:  # (not a zip at all: BadZipFile, the reader's to word)
        raise Unreadable(f"corrupt Office file ({type(exc).__name__}: {exc})") from exc


def _check_declared(info: zipfile.ZipInfo, member_max: int, max_ratio: float) -> None:
    if info.file_size > member_max:
        raise Unreadable(f"part {info.filename} unpacks to {_mb(info.file_size)}, over {_mb(member_max)} (the bound "
                         f"per part): skipped as a possible zip bomb; raise it with ${ENV}=member_mb=N")
    if info.file_size >= _RATIO_FLOOR and info.file_size > max_ratio * max(info.compress_size, 1):
        raise Unreadable(f"part {info.filename} inflates {info.file_size / max(info.compress_size, 1):,.0f} times "
                         f"(over {max_ratio:g}): skipped as a possible zip bomb; raise it with "
                         f"${ENV}=max_ratio=N")


def _check_actual(archive: zipfile.ZipFile, info: zipfile.ZipInfo, member_max: int) -> None:
    """Inflate the member 1 MB at a time, keeping nothing, and compare what comes out with its header.

    zipfile stops a member at its declared size and then finds the CRC wrong, so a header that says less
    than the member holds is a `BadZipFile` here; one that says more is a short read."""
    seen = 0
    try:
        with archive.open(info) as stream:
            while chunk := stream.read(_CHUNK):
                seen += len(chunk)
                if seen > min(info.file_size, member_max):
                    break
    except zipfile.BadZipFile as exc:  # the CRC of the first `file_size` bytes: the member goes on past them
        raise Unreadable(f"part {info.filename} does not inflate to the {info.file_size:,} bytes its header says "
                         f"({exc}): skipped as a damaged or hostile zip") from None
    if seen != info.file_size:
        raise Unreadable(f"part {info.filename} unpacks to {seen:,} bytes, not the {info.file_size:,} its header "
                         "says: skipped as a damaged or hostile zip")

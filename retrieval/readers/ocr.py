"""OCR for PDF pages that have no text layer: the optional `ocr` extra (`pip install 'raystorm[ocr]'`).

It uses rapidocr-onnxruntime, whose PP-OCR models ship inside its wheel, so it runs offline. A page
is rendered at 144 dpi and read; the words found are set into lines top to bottom, left to right.
The same page gives the same lines on every run, so a citation of a scanned page re-reads like any
other. Without the extra such a page has no lines, and a PDF of only such pages is skipped.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache

_SCALE = 2.0  # 72 dpi x 2


def available() -> bool:
    return importlib.util.find_spec("rapidocr_onnxruntime") is not None


@lru_cache(maxsize=1)
def _engine():
    from rapidocr_onnxruntime import RapidOCR

    return RapidOCR()


def page_lines(page) -> list[str]:
    """The text OCR reads on a pypdfium2 page, as lines."""
    bitmap = page.render(scale=_SCALE)
    try:
        found, _ = _engine()(bitmap.to_numpy())  # BGR, as the engine expects
    finally:
        bitmap.close()
    boxes = []
    for points, text, _score in found or []:
        ys, xs = [p[1] for p in points], [p[0] for p in points]
        boxes.append((min(ys), max(ys), min(xs), " ".join(str(text).split())))
    lines: list[list[tuple[float, float, float, str]]] = []
    for box in sorted(boxes):
        top, bottom = box[0], box[1]
        if lines:
            last = lines[-1]
            l_top, l_bottom = min(b[0] for b in last), max(b[1] for b in last)
            # on the same line when the box's middle lies within the line's height
            if l_top <= (top + bottom) / 2 <= l_bottom:
                last.append(box)
                continue
        lines.append([box])
    return [" ".join(b[3] for b in sorted(line, key=lambda b: b[2]) if b[3]) for line in lines]

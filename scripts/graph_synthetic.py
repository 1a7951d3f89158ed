"""A synthetic corpus of product bulletins that supersede and amend each other, with the true edges.

Used by scripts/bench_graph.py (not by the tests): `write_corpus(folder, products)`
writes eight documents per product — a policy form, three bulletins in which later
ones supersede sections of earlier ones (changing their figures), an endorsement
that amends a section of the form, a timeline that only retells the changes, and
two editions of a rate manual that say nothing of each other (edition order) —
and returns the supersedes/amends edges the corpus states and the "what is
current" questions with the value in force and the value it replaced.
"""

from __future__ import annotations

import random
from pathlib import Path

_SYLLABLES = ["al", "bren", "cor", "dun", "el", "fair", "gil", "hal", "ist", "jor", "kel", "lor", "mar", "nor",
              "ost", "pell", "quen", "ros", "sal", "tor", "ul", "ver", "wen", "yar"]
_NOUNS = ["boat", "orchard", "studio", "garage", "kiosk", "barn", "clinic", "bakery", "workshop", "pier",
          "vineyard", "gallery"]


def _name(rng: random.Random) -> str:
    return (rng.choice(_SYLLABLES) + rng.choice(_SYLLABLES) + rng.choice(_SYLLABLES)).title()


def write_corpus(folder: Path, products: int = 24, seed: int = 7):
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    edges: set[tuple[str, str, str]] = set()  # (type, source node, target node)
    questions = []
    used: set[str] = set()
    for i in range(products):
        name = _name(rng)
        while name in used:
            name = _name(rng)
        used.add(name)
        thing = rng.choice(_NOUNS)
        code = f"{name[:2].upper()}-{10 + i}"
        base = f"https://synthetic.example/{name.lower()}"
        years = [2018 + rng.randint(0, 2), 2021 + rng.randint(0, 1), 2023 + rng.randint(0, 1)]
        nums = [f"{y}-{i + 1:02d}" for y in years]
        deductibles = [rng.choice([500, 750, 1000]) * (j + 1) + 250 * j for j in range(3)]
        waits = [rng.choice([30, 45, 60]), 0, rng.choice([7, 10, 14])]
        form = f"{base}/form"
        (folder / f"{name.lower()}-form.md").write_text(
            f"---\ntitle: {name} {thing.title()} Policy (Form {code})\nurl: {form}\n---\n"
            f"# {name} {thing.title()} Policy (Form {code})\n\nThe {name} policy insures a {thing} and its "
            f"contents.\n\n## Coverage\n\nDirect physical loss to the {thing} is covered. Amounts are set by "
            f"bulletin.\n\n## Claims\n\nReport a loss within 30 days.\n", encoding="utf-8")
        urls = [f"{base}/bulletins/{n}" for n in nums]
        headers = ["", f"**Supersedes:** Section 1 of Bulletin {nums[0]}",
                   f"**Supersedes:** Section 2 of Bulletin {nums[0]}"]
        for j in range(3):
            sec1 = (f"The deductible for the {name} policy is ${deductibles[j]:,} per loss."
                    + (f" This rule replaces the deductible stated in Bulletin {nums[0]}." if j == 1 else "")
                    if j != 2 else f"The {name} policy's deductible is not changed by this bulletin.")
            sec2 = (f"Cover under the {name} policy begins {waits[j]} days after purchase." if j != 1 else
                    f"The {name} policy's cover start is not changed by this bulletin.")
            (folder / f"{name.lower()}-bulletin-{nums[j]}.md").write_text(
                f"---\ntitle: Bulletin {nums[j]}: {name} Policy Amounts\nurl: {urls[j]}\n---\n"
                f"# Bulletin {nums[j]}: {name} Policy Amounts\n\n**Effective:** March 1, {years[j]}\n"
                f"**Applies to:** form {code}\n{headers[j]}\n\n## Section 1. Deductible\n\n{sec1}\n\n"
                f"## Section 2. Waiting period\n\n{sec2}\n\n## Section 3. Filing\n\nFiled under number "
                f"F-{nums[j]}.\n", encoding="utf-8")
        edges.add(("supersedes", urls[1], f"{urls[0]}#Section 1. Deductible"))
        edges.add(("supersedes", f"{urls[1]}#Section 1. Deductible", f"{urls[0]}#Section 1. Deductible"))
        edges.add(("supersedes", urls[2], f"{urls[0]}#Section 2. Waiting period"))
        end = f"{base}/endorsements/e-{i}"
        (folder / f"{name.lower()}-endorsement.md").write_text(
            f"---\ntitle: Endorsement EN-{i + 1}: {name} {thing.title()} Exceptions\nurl: {end}\n---\n"
            f"# Endorsement EN-{i + 1}: {name} {thing.title()} Exceptions\n\n**Amends:** form {code}, section "
            f"\"Coverage\"\n\n## Exceptions\n\nLoss to a {thing} under construction is not covered.\n",
            encoding="utf-8")
        edges.add(("amends", end, f"{form}#Coverage"))
        (folder / f"{name.lower()}-timeline.md").write_text(
            f"---\ntitle: {name} Policy Timeline\nurl: {base}/timeline\n---\n# {name} Policy Timeline\n\n"
            f"- {years[1]}: Bulletin {nums[1]} supersedes Section 1 of Bulletin {nums[0]}.\n"
            f"- {years[2]}: Bulletin {nums[2]} supersedes Section 2 of Bulletin {nums[0]}.\n", encoding="utf-8")
        # a rate manual in two editions that say nothing of each other: ordered by edition (title and date)
        rates = [rng.choice([40, 55, 70]), rng.choice([85, 95, 110])]
        manuals = [f"{base}/manual/{years[0]}", f"{base}/manual/{years[2]}"]
        for j, year in enumerate((years[0], years[2])):
            (folder / f"{name.lower()}-rate-manual-{year}.md").write_text(
                f"---\ntitle: {name} Rate Manual ({year} edition)\nurl: {manuals[j]}\neffective: {year}-01-01\n---\n"
                f"# {name} Rate Manual\n\n## Base rate\n\nThe base rate for the {name} policy is "
                f"{rates[j]} cents per $100 of cover.\n", encoding="utf-8")
        edges.add(("supersedes", manuals[1], manuals[0]))
        questions.append({"question": f"What is the current base rate for the {name} policy?",
                          "current": [f"{rates[1]} cents"], "superseded": [f"{rates[0]} cents"]})
        questions.append({"question": f"What is the current deductible for the {name} policy?",
                          "current": [f"${deductibles[1]:,}"], "superseded": [f"${deductibles[0]:,}"]})
        questions.append({"question": f"How many days after purchase does cover under the {name} policy begin now?",
                          "current": [f"{waits[2]} days"], "superseded": [f"{waits[0]} days"]})
    return edges, questions

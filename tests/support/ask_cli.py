"""`raystorm ask --json` in this process, for the answer tests over a document family ingested once."""

from __future__ import annotations

import json


def ask_json(home: str, collection: str, question: str, capsys, strategy: str = "chain") -> dict:
    """What `raystorm ask QUESTION -c COLLECTION --strategy STRATEGY --json` prints, parsed."""
    from cluster.cli import main

    capsys.readouterr()
    assert main(["ask", question, "-c", collection, "--strategy", strategy, "--json", "--data-dir", home]) == 0
    return json.loads(capsys.readouterr().out)

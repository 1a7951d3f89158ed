"""Scripts that choose raystorm's shipped defaults by cross-validation on dev data (docs/evaluation.md).
Run each from the repository root: `python -m scripts.calibrate.NAME --help`."""

"""Benchmarks users run (docs/benchmarks.md), and in calibrate/ the scripts that choose shipped defaults.
Run each from the repository root as a module: `python -m scripts.NAME --help`."""

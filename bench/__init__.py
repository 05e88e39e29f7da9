"""GeoFaham-Bench: tasks over real disasters (tasks.json, spec.py, ground_truth.py), a runner, a
deterministic judge and an LLM judge with the GeoFaham paper's rubric, a report, and a batch mode.
See bench/README.md; the commands are in bench/cli.py (``python -m bench --help``)."""

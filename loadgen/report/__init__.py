"""Outputs: console tables, progress, files and plots, rendered from the results.

Owns every file and line a person reads, in three rooms and the pieces they
share: the terminal (``terminal``: the console's step tables and verdict,
the live progress line and the live view), the documents (``documents``:
report.md and report.html, every file of a results directory rewritten,
``loadgen compare``'s folder) and the plots (``plots``: each plot's series,
then its figure). At the top: what each feature says of a step, one
section each (``section`` the type; ``sessions``, ``validity``, ``endpoints``,
``mix``, ``cache``, ``frontier``, ...; ``sections`` their one ordered list,
which every writer iterates), the flat step table that steps.csv, Parquet and
MLflow share (``step_table``), the run header's words (``facts``), and what
``--repeat`` and compare's environment
check decided, rendered (``repeats``, ``environment``). Never reads the clock (the run
passes the time in), never sends load, never judges a regression (that is
:mod:`loadgen.compare`).
"""

"""Outputs: console tables, progress, files and plots, rendered from the results.

Owns every file and line a person reads, in three rooms and the pieces they
share: the terminal (``terminal``: the console's step tables and verdict,
the live progress line and the live view), the documents (``documents``:
report.md and report.html, every file of a results directory rewritten,
``loadgen compare``'s folder) and the plots (``plots``: each plot's series,
then its figure). At the top: steps.csv (``csv_out``), what each feature
says in every output (``facts``, ``sessions``, ``validity``, ``endpoints``,
``mix``, ``pooling``, ...), and what ``--repeat`` and compare's environment
check decided, rendered (``repeats``, ``environment``). Never reads the clock (the run
passes the time in), never sends load, never judges a regression (that is
:mod:`loadgen.compare`).
"""

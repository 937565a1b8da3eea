"""The files a run and a comparison are written as: report.md, report.html, comparison.md/html.

Owns the document of a run (``markdown``: its overview, verdict and each
step's sections from ``step_doc``) and its two renderings, Markdown and a
self-contained HTML page (``html``); the writer of every output file of a
results directory (``writer``: steps.csv, plots/, report.md, report.html);
and ``loadgen compare``'s folder (``comparison``: its tables, overlay plots,
comparison.md and comparison.html). The blocks themselves (heading, text,
table, figures) are :mod:`loadgen.report.blocks`.
"""

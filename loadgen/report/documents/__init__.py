"""report.md and report.html: a run as one document of blocks.

Owns the document of a run (``markdown``: its overview, verdict and each
step's sections from ``step_doc``) and its two renderings, Markdown and a
self-contained HTML page (``html``). The blocks themselves (heading, text,
table, figures) are :mod:`loadgen.report.blocks`.
"""

"""The plots of a run and of ``loadgen compare``: series first, then figures.

Owns the data of every plot as pure functions of the summary and samples
(``series``, ``sample_series``, ``frontier_view``, ``pooling_views``), and
their drawing as matplotlib figures saved as PNG (``figures`` writes
``plots/``; the ``*_figure`` modules draw one kind each in the shared look of
``figstyle``, labels placed by ``labels``). matplotlib is imported inside the
functions, so importing a module costs nothing.
"""

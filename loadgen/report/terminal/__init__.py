"""What a person reads on a terminal while a run lasts and when a step ends.

Owns the console's step tables, run header and verdict (``console``), the
live progress line (``progress``: silent off a terminal) and the live view
(``live``, its counters and rolling figures in ``live_state``). Never reads
the clock: the run hands in a ``now`` callable.
"""

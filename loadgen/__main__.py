"""``python -m loadgen``."""

from loadgen.cli import main

main()

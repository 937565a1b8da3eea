"""``python -m loadgen.mock``: run the built-in mock server."""

from loadgen.mock.server import main

raise SystemExit(main())

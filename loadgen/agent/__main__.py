"""``python -m loadgen.agent``: run the agent (see :func:`loadgen.agent.main`)."""

from loadgen.agent import main

raise SystemExit(main())

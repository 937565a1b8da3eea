"""``python -m loadgen.gpu_agent``: run the agent (see :func:`loadgen.gpu_agent.main`)."""

from loadgen.gpu_agent import main

raise SystemExit(main())

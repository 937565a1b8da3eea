# loadgen: the load generator, the built-in mock server and the GPU agent in one image.
#
#   docker build -t loadgen:local .
#   docker run --rm loadgen:local --help
#   docker run --rm -v "$PWD/results:/results" loadgen:local run scenarios/demo.yaml --out /results/demo
#
# The agent needs the host's NVIDIA driver inside the container: run it with
# `--gpus all` (or the compose file's device reservation); NVML comes from the
# driver the NVIDIA container toolkit mounts, not from this image.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MPLCONFIGDIR=/tmp/matplotlib \
    NVIDIA_DRIVER_CAPABILITIES=utility

WORKDIR /app
# Dependencies and package first, scenarios last: editing a scenario does not
# reinstall anything.
COPY pyproject.toml README.md ./
COPY loadgen ./loadgen
RUN pip install . && loadgen --help >/dev/null
COPY scenarios ./scenarios
RUN mkdir -p /results

ENTRYPOINT ["loadgen"]
CMD ["--help"]

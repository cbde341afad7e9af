# The action's container: ci-eval and git, nothing else. No USER or WORKDIR: GitHub mounts the
# workspace as the working directory and runs the container as root.
FROM python:3.11.10-slim-bookworm

RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'

COPY pyproject.toml README.md /src/
COPY ci_eval /src/ci_eval
COPY templates /src/templates
RUN pip install --no-cache-dir /src && rm -rf /src

ENTRYPOINT ["ci-eval", "action"]

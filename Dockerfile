# The action's image: ci-eval and the git binary, nothing else. Releases are prebuilt for amd64
# and arm64 and pushed to GHCR by .github/workflows/release.yml, which pins the base image by
# digest (BASE_DIGEST there; see the README's "Releasing"); action.yml points at that image.
#
#   docker build -t ci-eval .                            # slim: every agent kind but `adk`
#   docker build --build-arg EXTRAS=adk -t ci-eval:adk . # with google-adk, for `agent: adk`
#
# No USER or WORKDIR: GitHub mounts the workspace as the working directory and runs the
# container as root; the reports are written with the umask's mode (0644), so the runner's user
# reads them in later steps.

# ---- build: install ci-eval and its locked dependencies under /install ----------------------
FROM python:3.11.10-slim-bookworm AS build

# Debian's git package depends on perl (84 MB) for porcelain scripts ci-eval never runs (it
# calls rev-parse, merge-base and show); the git binary itself needs only libc, zlib and pcre2,
# which the base image has. It is installed here and only the binary is copied below.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*

# "" (the slim image) or "adk" (google-adk, for `agent: adk`)
ARG EXTRAS=""
COPY constraints.txt pyproject.toml README.md /src/
COPY ci_eval /src/ci_eval
COPY templates /src/templates
# every dependency at the version constraints.txt pins (regenerate it as the README says);
# the packages' own test suites (numpy's alone is ~15 MB) are never imported: dropped
RUN pip install --no-cache-dir --disable-pip-version-check --root-user-action=ignore \
        --prefix=/install --constraint /src/constraints.txt "/src${EXTRAS:+[$EXTRAS]}" \
    && find /install -depth -type d \( -name tests -o -name test \) \
        -path '*/site-packages/*/*' -exec rm -rf {} +

# ---- the image: the base, the installed packages and git; no compiler, apt lists or pip cache -
FROM python:3.11.10-slim-bookworm

ARG EXTRAS=""
COPY --from=build /usr/bin/git /usr/bin/git
COPY --from=build /install /usr/local
# CI_EVAL_IMAGE tells ci-eval which variant it runs in, so `agent: adk` in the slim image fails
# at once with the image to use instead. The build fails here if git or ci-eval cannot start.
ENV CI_EVAL_IMAGE=${EXTRAS:-slim} \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
RUN git config --system --add safe.directory '*' \
    && git --version \
    && ci-eval --version \
    && ci-eval metrics >/dev/null

ENTRYPOINT ["ci-eval", "action"]

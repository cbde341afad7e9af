#!/usr/bin/env bash
# The ADK variant of the action's image, checked as the slim one is: build it the way
# release.yml does (--build-arg EXTRAS=adk), run ../shared/tools/action-in-docker.sh's checks on
# it (build, push, pr, cancel, start-up), then the one thing only that image can do: `agent: adk`
# on the bundled sample agent, inside the container, run the way GitHub's runner runs a Docker
# action (workspace owned by uid 1001, INPUT_*, GITHUB_OUTPUT); its exit code, outputs and
# reports against the host's `ci-eval run --agent adk`. Last lines: both images' sizes.
#
#   bash benchmarks/adk_image.sh          # about 3 min after the tool's first run (5-10 min)
#
# Needs what the tool needs (root, Debian, apt and PyPI). Uses the tool's work dir
# (ACTION_DOCKER_HOME, default ${TMPDIR:-/tmp}/action-in-docker) and its dockerd: started here
# first, so the tool reuses it and the ADK scenario can run after the tool's checks.
set -euo pipefail
umask 022
REPO=$(cd "$(dirname "$0")/.." && pwd -P)
TOOL=${ACTION_IN_DOCKER:-$REPO/../shared/tools/action-in-docker.sh}
H=${ACTION_DOCKER_HOME:-${TMPDIR:-/tmp}/action-in-docker}
[ -x "$TOOL" ] || { echo "adk_image: no $TOOL (../shared/tools)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "adk_image: needs root, as the tool does" >&2; exit 2; }
mkdir -p "$H"
H=$(cd "$H" && pwd -P)
SOCK=$H/docker.sock
export DOCKER_HOST=unix://$SOCK
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ci-eval-adk-image.XXXXXX")
chmod 755 "$WORK" # the runner's uid reads the reports below it
VARIANT=$WORK/ci-eval-adk # the tool names the image after the folder: ci-eval-adk-action:local
IMAGE=ci-eval-adk-action:local
RUNNER_UID=1001
DOCKERD_PID=

stop() {
  if [ -n "$DOCKERD_PID" ]; then
    kill -TERM "$DOCKERD_PID" 2>/dev/null || true
    wait "$DOCKERD_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap stop EXIT

command -v dockerd >/dev/null || { "$TOOL" --help >/dev/null; echo "adk_image: run the tool once first (it installs docker.io)" >&2; exit 2; }
if ! timeout 10 docker version >/dev/null 2>&1; then
  mkdir -p "$H/data" "$H/exec" "$H/logs"
  dockerd --data-root "$H/data" --exec-root "$H/exec" --pidfile "$H/dockerd.pid" -H "unix://$SOCK" \
    --iptables=false --bridge=none --ip6tables=false \
    --containerd-namespace action-in-docker --containerd-plugins-namespace action-in-docker-plugins \
    >"$H/logs/dockerd-adk.log" 2>&1 </dev/null &
  DOCKERD_PID=$!
  for _ in $(seq 60); do timeout 10 docker version >/dev/null 2>&1 && break; sleep 1; done
fi

# the variant: this working tree (tracked and untracked, not ignored), its Dockerfile's EXTRAS
# defaulting to adk, as a git repository as the tool expects
mkdir -p "$VARIANT"
(cd "$REPO" && git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t "$VARIANT")
sed -i 's/^ARG EXTRAS=""$/ARG EXTRAS="adk"/' "$VARIANT/Dockerfile"
[ "$(grep -c '^ARG EXTRAS="adk"$' "$VARIANT/Dockerfile")" = 2 ] ||
  { echo "adk_image: the Dockerfile has no two ARG EXTRAS=\"\" lines to turn to adk" >&2; exit 2; }
git -C "$VARIANT" init -q && git -C "$VARIANT" add -A &&
  git -C "$VARIANT" -c user.name=x -c user.email=x@x commit -qm variant

echo "== action-in-docker on the ADK image"
TOOL_RC=0
ACTION_DOCKER_HOME=$H "$TOOL" "$VARIANT" || TOOL_RC=$?

echo "== agent: adk in the ADK image"
S=$WORK/adk-run
mkdir -p "$S/workspace" "$S/files"
cp -r "$REPO/samples" "$S/workspace/"
: >"$S/files/output" && : >"$S/files/summary"
chown -R "$RUNNER_UID:$RUNNER_UID" "$S"
HOST_RC=0
(cd "$S/workspace" && "$REPO/.venv/bin/ci-eval" run samples --agent adk \
  --agent-module samples/agents/weather_agent --results /dev/null >"$S/host.out" 2>&1) || HOST_RC=$?
RC=0
docker run --rm --network none --workdir /github/workspace \
  -v "$S/workspace:/github/workspace" -v "$S/files:/github/file_commands" \
  -e GITHUB_ACTIONS=true -e GITHUB_WORKSPACE=/github/workspace -e GITHUB_EVENT_NAME=push \
  -e GITHUB_OUTPUT=/github/file_commands/output -e GITHUB_STEP_SUMMARY=/github/file_commands/summary \
  -e INPUT_AGENT=adk -e INPUT_AGENT-MODULE=samples/agents/weather_agent -e INPUT_PATHS=samples \
  -e INPUT_COMMENT=false -e INPUT_JUNIT=ci-eval-junit.xml -e INPUT_RESULTS=ci-eval-results.json \
  -e INPUT_JOB-SUMMARY=true "$IMAGE" >"$S/stdout" 2>"$S/stderr" || RC=$?
FAILED=0
check() { # check NAME OK DETAIL
  if [ "$2" = 0 ]; then echo "PASS  $1  $3"; else echo "FAIL  $1  $3"; FAILED=$((FAILED + 1)); fi
}
check "adk exit code" "$([ "$RC" = "$HOST_RC" ] && echo 0 || echo 1)" "container $RC, host $HOST_RC"
OUT=$(tr '\n' ' ' <"$S/files/output")
check "adk outputs" "$([[ $OUT == *"total=6"* && $OUT == *"passed=4"* && $OUT == *"failed=1"* ]] && echo 0 || echo 1)" "$OUT"
for f in ci-eval-junit.xml ci-eval-results.json; do
  ok=$(setpriv --reuid=$RUNNER_UID --regid=$RUNNER_UID --clear-groups cat "$S/workspace/$f" >/dev/null 2>&1 && echo 0 || echo 1)
  check "adk $f" "$ok" "readable by uid $RUNNER_UID"
done
check "adk summary" "$([ -s "$S/files/summary" ] && echo 0 || echo 1)" "$(wc -c <"$S/files/summary") B"
SLIM=$(basename "$REPO" | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9._\n-' '-')-action:local
SLIM_MB=$(docker image inspect "$SLIM" --format '{{.Size}}' 2>/dev/null | awk '{printf "%.1f", $1 / 1e6}')
ADK_MB=$(docker image inspect "$IMAGE" --format '{{.Size}}' | awk '{printf "%.1f", $1 / 1e6}')
echo "images: slim ${SLIM_MB:-?} MB (from the tool's last run on this tree), adk $ADK_MB MB"
echo "adk_image: tool exit $TOOL_RC; agent adk checks: $FAILED failed"
[ "$TOOL_RC" = 0 ] && [ "$FAILED" = 0 ]

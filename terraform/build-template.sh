#!/usr/bin/env bash
# The Flex Template build, between the bootstrap stage (terraform/bootstrap/) and the main stage
# (terraform/): builds the Dataflow jar, builds and pushes the launcher image to the bootstrap
# stage's Artifact Registry repository, and writes the template spec where the main stage's job
# runs it: gs://BUCKET/templates/tidemark-TAG.json, next to the image IMAGE:TAG. Each build has
# its own spec, so the main stage's template_version=TAG is a change Terraform sees and rolls out.
#
#   terraform/build-template.sh [--dry-run] [--tag=TAG]
#
# Needs Maven and Java 17, Docker, gcloud (logged in, with the bootstrap stage applied). The image
# and the specs' folder come from the bootstrap stage's outputs; TIDEMARK_TEMPLATE_IMAGE and
# TIDEMARK_TEMPLATE_SPECS override them. TAG defaults to the commit (git rev-parse --short HEAD).
# The launcher base image is pinned by digest: TIDEMARK_LAUNCHER_BASE (IMAGE@sha256:...), or the
# digest Google's java17 launcher image's 'latest' tag has when the build runs, printed so that
# the next build can be given the same one. --dry-run prints the commands instead of running them
# (with TIDEMARK_LAUNCHER_BASE unset, it prints the digest look-up too).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DRY_RUN=false
TAG=""
for arg in "$@"; do
  case "$arg" in
    --dry-run) DRY_RUN=true ;;
    --tag=*) TAG="${arg#--tag=}" ;;
    *)
      echo "build-template.sh: unknown argument '$arg'; usage: build-template.sh [--dry-run] [--tag=TAG]" >&2
      exit 2
      ;;
  esac
done

bootstrap_output() {
  terraform -chdir="$ROOT/terraform/bootstrap" output -raw "$1"
}

run() {
  if $DRY_RUN; then
    printf '%q ' "$@"
    printf '\n'
  else
    "$@"
  fi
}

IMAGE_NAME="${TIDEMARK_TEMPLATE_IMAGE:-$(bootstrap_output template_image)}"
SPECS="${TIDEMARK_TEMPLATE_SPECS:-$(bootstrap_output template_specs)}"
[[ -n "$TAG" ]] || TAG="$(git -C "$ROOT" rev-parse --short HEAD)"
if [[ ! "$TAG" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]]; then
  echo "build-template.sh: tag '$TAG' is not a Docker tag (letters, digits, '_', '.', '-')" >&2
  exit 2
fi
IMAGE="$IMAGE_NAME:$TAG"
SPEC="$SPECS/tidemark-$TAG.json"
REGISTRY="${IMAGE_NAME%%/*}"
LAUNCHER_IMAGE=gcr.io/dataflow-templates-base/java17-template-launcher-base
LAUNCHER_BASE="${TIDEMARK_LAUNCHER_BASE:-}"
if [[ -n "$LAUNCHER_BASE" && "$LAUNCHER_BASE" != *@sha256:* ]]; then
  echo "build-template.sh: TIDEMARK_LAUNCHER_BASE must be pinned by digest (IMAGE@sha256:...)" >&2
  exit 2
fi
if [[ -z "$LAUNCHER_BASE" ]]; then
  if $DRY_RUN; then
    run gcloud container images describe "$LAUNCHER_IMAGE:latest" --format='value(image_summary.digest)'
    LAUNCHER_BASE="$LAUNCHER_IMAGE@sha256:DIGEST"
  else
    LAUNCHER_BASE="$LAUNCHER_IMAGE@$(gcloud container images describe "$LAUNCHER_IMAGE:latest" \
      --format='value(image_summary.digest)')"
  fi
fi
echo "build-template.sh: launcher base $LAUNCHER_BASE (TIDEMARK_LAUNCHER_BASE=$LAUNCHER_BASE pins it)" >&2

cd "$ROOT"
run mvn -B -DskipTests -pl pipelines -am package
run gcloud auth configure-docker "$REGISTRY" --quiet
run docker build -f pipelines/flex-template/Dockerfile --build-arg "LAUNCHER_BASE=$LAUNCHER_BASE" \
  -t "$IMAGE" .
run docker push "$IMAGE"
run gcloud dataflow flex-template build "$SPEC" --image="$IMAGE" --sdk-language=JAVA \
  --metadata-file=pipelines/flex-template/metadata.json
echo "build-template.sh: built $SPEC; roll it out with -var template_version=$TAG" >&2

#!/usr/bin/env bash
# The Flex Template build, between the bootstrap stage (terraform/bootstrap/) and the main stage
# (terraform/): builds the Dataflow jar, builds and pushes the launcher image to the bootstrap
# stage's Artifact Registry repository, and writes the template spec where the main stage's job
# expects it (gs://BUCKET/templates/tidemark.json).
#
#   terraform/build-template.sh [--dry-run] [--tag=TAG]
#
# Needs Maven and Java 17, Docker, gcloud (logged in, with the bootstrap stage applied). The image
# and spec paths come from the bootstrap stage's outputs; TIDEMARK_TEMPLATE_IMAGE and
# TIDEMARK_TEMPLATE_SPEC override them. --dry-run prints the commands instead of running them.
# TAG defaults to the commit (git rev-parse --short HEAD).
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
SPEC="${TIDEMARK_TEMPLATE_SPEC:-$(bootstrap_output template_spec)}"
[[ -n "$TAG" ]] || TAG="$(git -C "$ROOT" rev-parse --short HEAD)"
IMAGE="$IMAGE_NAME:$TAG"
REGISTRY="${IMAGE_NAME%%/*}"

cd "$ROOT"
run mvn -B -DskipTests -pl pipelines -am package
run gcloud auth configure-docker "$REGISTRY" --quiet
run docker build -f pipelines/flex-template/Dockerfile -t "$IMAGE" .
run docker push "$IMAGE"
run gcloud dataflow flex-template build "$SPEC" --image="$IMAGE" --sdk-language=JAVA \
  --metadata-file=pipelines/flex-template/metadata.json

#!/usr/bin/env bash
# The experiments workflow's plan step: one job matrix per target from `cargo xtask matrix` (the
# `local` and `remote` outputs, each empty when that target has no job), the run's `date` for the
# artifacts' names, and the jobs' cost table in the step summary.
#
# Remote jobs are planned only when CLOUDFLARE is `true`: the workflow's `cloudflare` job found
# the secrets in the `cloudflare` environment. Elsewhere (a fork, a copy without that environment)
# they are left out with a notice and the local jobs still run; a run left with no job at all fails.
#
# With SHARDS (2 to 64) it also plans each workload selected as that many shard jobs per target
# (`cargo xtask matrix --shards`: the `sharded_local` and `sharded_remote` outputs, each empty
# when that target has no job), which the workflow's merge job merges into one run per group.
#
# Reads EXPERIMENTS, TARGETS (local, remote or both), LOCATIONS, PROFILE (a profile name, or
# `default` for each experiment's own), LOCAL_PROFILE (optional: the local jobs' profile where an
# experiment has it), SHARDS (optional: 0 or empty for none), PLAN and CLOUDFLARE from the
# environment, and
# GITHUB_OUTPUT and GITHUB_STEP_SUMMARY as the runner sets them. The xtask tests run it with a stand-in cargo
# (xtask/src/tasks/workflows.rs).
set -euo pipefail

args=(--experiments "$EXPERIMENTS" --locations "$LOCATIONS" --plan "$PLAN")
if [ "$PROFILE" != default ]; then
  args+=(--profile "$PROFILE")
fi
# The weekly schedule's local jobs run each experiment's `weekly` profile where it has one:
# enough sessions for the week-on-week comparison to catch a 20% change.
if [ -n "${LOCAL_PROFILE:-}" ]; then
  args+=(--local-profile "$LOCAL_PROFILE")
fi

case "$TARGETS" in
  local) want_local=true want_remote=false ;;
  remote) want_local=false want_remote=true ;;
  both) want_local=true want_remote=true ;;
  *)
    echo "::error::unknown target '$TARGETS': expected local, remote or both"
    exit 1
    ;;
esac

if [ "$want_remote" = true ] && [ "${CLOUDFLARE:-false}" != true ]; then
  want_remote=false
  echo "::notice title=Remote jobs skipped::CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID are not set in this repository's cloudflare environment (forks and copies do not inherit them), so only local jobs run. Add both secrets to the environment under Settings, Environments to run on Cloudflare."
fi
if [ "$want_local" = true ] && [ "$want_remote" = true ]; then
  targets=both
elif [ "$want_local" = true ]; then
  targets=local
elif [ "$want_remote" = true ]; then
  targets=remote
else
  echo "::error title=Nothing to run::target '$TARGETS' asks for remote jobs only, and this repository's cloudflare environment lacks CLOUDFLARE_API_TOKEN or CLOUDFLARE_ACCOUNT_ID."
  exit 1
fi

# The run's date (UTC), in every artifact's name: the same for all its jobs, even one that ends
# after midnight.
echo "date=$(date -u +%Y-%m-%d)" >>"$GITHUB_OUTPUT"

# One matrix per target, each asked for with that one `--targets` value, so a remote job never
# lands in the local matrix (whose jobs have no secrets) nor a local one in the remote matrix.
for target in local remote; do
  want="want_$target"
  matrix=""
  if [ "${!want}" = true ]; then
    matrix="$(cargo --locked xtask matrix "${args[@]}" --targets "$target")"
  fi
  echo "$target=$matrix" >>"$GITHUB_OUTPUT"
done

# The sharded jobs, per target, when asked for.
shards="${SHARDS:-0}"
case "$shards" in
  '' | 0 | 1) shards=0 ;;
  *[!0-9]*)
    echo "::error::SHARDS '$shards' is not a number of shards (2 to 64, or 0 for none)"
    exit 1
    ;;
esac
for target in local remote; do
  want="want_$target"
  matrix=""
  if [ "$shards" != 0 ] && [ "${!want}" = true ]; then
    matrix="$(cargo --locked xtask matrix "${args[@]}" --targets "$target" --shards "$shards")"
  fi
  echo "sharded_$target=$matrix" >>"$GITHUB_OUTPUT"
done

{
  echo '```text'
  cargo --locked xtask matrix "${args[@]}" --targets "$targets" --format table
  echo '```'
} >>"$GITHUB_STEP_SUMMARY"

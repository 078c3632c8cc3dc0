#!/usr/bin/env bash
# The experiments workflow's weekly comparison: each sweep run of this workflow run (under RUNS,
# as the report job downloaded them) is compared by `cargo xtask compare` with the same job's run
# in the previous scheduled run's artifacts, and each verdict goes to the job summary, so a change
# in D1 itself shows up as a dated change.
#
# The previous run is the newest completed `schedule` run of this workflow other than this one
# (`gh run list`); its `run-*` artifacts are downloaded into PREVIOUS with `gh run download`
# (GitHub's own CLI on the runner, with the job's token: nothing outside GitHub). compare's exit
# status says what it found: 0 no change detected, 1 a regression, 2 trouble (a run missing,
# unreadable or not comparable). A regression is a warning annotation, not a failed job: the
# runs happened, and the summary dates the change.
#
# Reads RUNS, PREVIOUS, WORKFLOW (the workflow file's name), RUN_ID (this run's id), GH_TOKEN and
# GITHUB_STEP_SUMMARY from the environment. The xtask tests run it with a stand-in gh and cargo
# (xtask/src/tasks/workflows.rs).
set -euo pipefail

summary() { echo "$*" >>"$GITHUB_STEP_SUMMARY"; }

summary "## Compared with the previous week"
summary ""

previous_id="$(gh run list --workflow "$WORKFLOW" --event schedule --status completed \
  --limit 10 --json databaseId --jq ".[].databaseId" | grep -vx "$RUN_ID" | head -n 1 || true)"
if [ -z "$previous_id" ]; then
  summary "No earlier scheduled run of this workflow: nothing to compare with yet."
  exit 0
fi
mkdir -p "$PREVIOUS"
if ! gh run download "$previous_id" --pattern 'run-*' --dir "$PREVIOUS"; then
  summary "The artifacts of run $previous_id could not be downloaded (expired after 90 days?): nothing compared."
  echo "::warning title=No comparison::the artifacts of run $previous_id could not be downloaded"
  exit 0
fi
summary "Against scheduled run $previous_id. Exit status of \`cargo xtask compare\`: 0 no change detected, 1 a regression, 2 trouble."
summary ""
summary "| job | run | previous run | verdict |"
summary "| --- | --- | --- | --- |"

compared=0
# Each comparison's compare.md, shown under the table.
details="$(mktemp)"
# Each artifact holds <job>/<run-id>/ (the job's --out is runs/<job>).
while IFS= read -r toml; do
  run_dir="$(dirname "$toml")"
  job="$(basename "$(dirname "$run_dir")")"
  # Sweeps along one axis only: ladders and workloads have no points to compare, grids compare
  # their decision maps.
  if ! grep -qx 'kind = "sweep"' "$toml" || grep -q '^y_axis = ' "$toml"; then
    continue
  fi
  before="$(find "$PREVIOUS" -mindepth 4 -maxdepth 4 -path "*/$job/*/run.toml" | sort | tail -n 1)"
  if [ -z "$before" ]; then
    summary "| $job | $(basename "$run_dir") | – | no run of this job last time |"
    continue
  fi
  before_dir="$(dirname "$before")"
  status=0
  cargo --locked xtask compare "$before_dir" "$run_dir" --out "$run_dir" >"$run_dir/compare.log" 2>&1 || status=$?
  case "$status" in
    0) verdict="no change detected" ;;
    1)
      verdict="**regression detected**"
      echo "::warning title=Regression in $job::compare found a point slower than last week (see the job summary)"
      ;;
    *)
      verdict="trouble (exit $status): $(grep -m1 '^error' "$run_dir/compare.log" || echo 'see compare.log')"
      ;;
  esac
  summary "| $job | $(basename "$run_dir") | $(basename "$before_dir") | $verdict |"
  compared=$((compared + 1))
  if [ -f "$run_dir/compare.md" ]; then
    {
      echo ""
      echo "<details><summary>$job: compare.md</summary>"
      echo ""
      cat "$run_dir/compare.md"
      echo ""
      echo "</details>"
      echo ""
    } >>"$details"
  fi
done < <(find "$RUNS" -mindepth 4 -maxdepth 4 -name run.toml | sort)

summary ""
summary "$compared sweep run(s) compared."
cat "$details" >>"$GITHUB_STEP_SUMMARY"

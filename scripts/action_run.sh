#!/usr/bin/env bash
# The shell steps of the GitHub Action (action.yml): install wheeldoc with uv, run `wheeldoc
# check`, write the SARIF file and the step outputs. Kept out of action.yml so that
# tests/test_action.py runs it locally with the GitHub variables faked.
#
# Inputs (environment; action.yml maps its inputs onto them):
#   WD_PATHS        paths to check, one per line (or separated by spaces)         default: .
#   WD_GPU, WD_DRIVER, WD_PLATFORM   the target (--gpu, --driver, --platform)      default: none
#   WD_FAIL_ON      error | warning | info | never                                 default: warning
#   WD_ARGS         more arguments for `wheeldoc check`, split on spaces
#   WD_SARIF        true: also write a SARIF report for code scanning             default: false
#   WD_ANNOTATIONS  true: report as workflow commands (::error file=…::), which GitHub shows as
#                   annotations; needs a wheeldoc with `--output-format github`, else the text
#                   report is printed with a warning                            default: true
#   WD_VERSION      a wheeldoc version from PyPI (0.2.0); empty: the action's own checkout
#   WD_ACTION_PATH  the action's checkout (github.action_path)
#   WHEELDOC_ACTION_EXE  a wheeldoc executable to use instead of installing one (tests; a runner
#                   that already has it)
# GitHub's: RUNNER_TEMP (scratch folder), GITHUB_OUTPUT (step outputs), GITHUB_STEP_SUMMARY.
# Outputs: exit-code (wheeldoc's: 0 clean, 1 findings at or above fail-on, 2 input or usage
# error), sarif-file (when WD_SARIF), version. The script itself exits 0 once wheeldoc ran, so
# the SARIF upload step still runs; action.yml's last step exits with exit-code.
set -euo pipefail

die() { echo "::error title=wheeldoc action::$*"; exit 2; }

: "${RUNNER_TEMP:?RUNNER_TEMP is not set (run by GitHub Actions, or fake it)}"
: "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set (run by GitHub Actions, or fake it)}"
WD_FAIL_ON=${WD_FAIL_ON:-warning}
case "$WD_FAIL_ON" in error|warning|info|never) ;; *) die "fail-on must be error, warning, info or never, not '$WD_FAIL_ON'" ;; esac
case "${WD_SARIF:-false}" in true|false) ;; *) die "sarif must be true or false, not '${WD_SARIF}'" ;; esac
case "${WD_ANNOTATIONS:-true}" in true|false) ;; *) die "annotations must be true or false, not '${WD_ANNOTATIONS}'" ;; esac

# -- install -------------------------------------------------------------------------------
if [ -n "${WHEELDOC_ACTION_EXE:-}" ]; then
  wheeldoc=$WHEELDOC_ACTION_EXE
else
  command -v uv >/dev/null 2>&1 || die "uv is not on PATH (action.yml installs it with astral-sh/setup-uv)"
  if [ -n "${WD_VERSION:-}" ]; then
    spec="wheeldoc==${WD_VERSION#v}"
  else
    [ -n "${WD_ACTION_PATH:-}" ] || die "neither version nor the action's path (WD_ACTION_PATH) is given"
    spec=$WD_ACTION_PATH
  fi
  venv="$RUNNER_TEMP/wheeldoc-action-venv"
  echo "::group::Install wheeldoc ($spec)"
  uv venv --quiet --allow-existing "$venv"
  uv pip install --quiet --python "$venv/bin/python" "$spec" || die "could not install $spec"
  echo "::endgroup::"
  wheeldoc="$venv/bin/wheeldoc"
fi
version=$("$wheeldoc" --version | awk '{print $NF}')
echo "version=$version" >>"$GITHUB_OUTPUT"

# -- arguments ----------------------------------------------------------------------------
paths=()
if [[ "${WD_PATHS:-}" == *$'\n'* ]]; then
  while IFS= read -r line; do
    line="${line#"${line%%[![:space:]]*}"}"; line="${line%"${line##*[![:space:]]}"}"
    [ -n "$line" ] && paths+=("$line")
  done <<<"$WD_PATHS"
else
  read -r -a paths <<<"${WD_PATHS:-}"
fi
[ "${#paths[@]}" -gt 0 ] || paths=(.)
args=(--fail-on "$WD_FAIL_ON")
[ -n "${WD_GPU:-}" ] && args+=(--gpu "$WD_GPU")
[ -n "${WD_DRIVER:-}" ] && args+=(--driver "$WD_DRIVER")
[ -n "${WD_PLATFORM:-}" ] && args+=(--platform "$WD_PLATFORM")
extra=()
[ -n "${WD_ARGS:-}" ] && read -r -a extra <<<"$WD_ARGS"

# -- run ----------------------------------------------------------------------------------
code=0
if [ "${WD_SARIF:-false}" = true ]; then
  sarif="$RUNNER_TEMP/wheeldoc.sarif"
  set +e
  "$wheeldoc" check "${paths[@]}" "${args[@]}" "${extra[@]}" --format sarif -o "$sarif"
  code=$?
  set -e
  if [ -s "$sarif" ]; then
    echo "sarif-file=$sarif" >>"$GITHUB_OUTPUT"
  else
    echo "::warning title=wheeldoc::no SARIF report was written (wheeldoc exited $code)"
  fi
fi

format=(--format text)
if [ "${WD_ANNOTATIONS:-true}" = true ]; then
  help=$("$wheeldoc" check --help 2>/dev/null || true)
  if [[ "$help" == *--output-format* && "$help" == *github* ]]; then
    format=(--output-format github)
  else
    echo "::warning title=wheeldoc::wheeldoc $version has no --output-format github: printing the text report instead of annotations"
  fi
fi
set +e
"$wheeldoc" check "${paths[@]}" "${args[@]}" "${extra[@]}" "${format[@]}"
log_code=$?
set -e
# Both runs see the same inputs; a SARIF run that could not finish (exit 2 or a crash) wins.
if [ "${WD_SARIF:-false}" = true ] && [ "$code" -gt 1 ]; then
  :
else
  code=$log_code
fi
echo "exit-code=$code" >>"$GITHUB_OUTPUT"

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  case "$code" in
    0) verdict="no findings at or above \`$WD_FAIL_ON\`" ;;
    1) verdict="findings at or above \`$WD_FAIL_ON\`" ;;
    2) verdict="an input or usage error" ;;
    *) verdict="wheeldoc stopped with exit code $code" ;;
  esac
  printf '### wheeldoc %s\n\n`wheeldoc check %s`: %s (exit %s).\n' "$version" "${paths[*]}" "$verdict" "$code" \
    >>"$GITHUB_STEP_SUMMARY"
fi
exit 0

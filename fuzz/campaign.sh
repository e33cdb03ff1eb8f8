#!/usr/bin/env bash
# fuzz/campaign.sh — the long fuzz run: EVERY target in fuzz/fuzz_targets/,
# one after another (one libFuzzer process, -jobs 1), each for SECONDS
# (default 600: ten minutes), through fuzz/run.sh; then a summary per target
# — executions, exec/s, coverage, corpus size, crashes — printed and written
# to fuzz/RESULTS.md. A target that crashes does not stop the others; the
# script exits 1 when any did, with the inputs in fuzz/artifacts/<target>/.
# Named targets (after a fix, say) run alone, and their rows are appended to
# RESULTS.md as a rerun instead of replacing it.
#
#   nice -n 10 bash fuzz/campaign.sh [-t SECONDS] [TARGET...]   # about 4 × SECONDS
#
# Builds go to ECP_FUZZ_TARGET_DIR, as for run.sh.
set -uo pipefail

FUZZ="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$FUZZ")"
SECONDS_EACH=600

while getopts "t:" opt; do
    case "$opt" in
        t) SECONDS_EACH="$OPTARG" ;;
        *) echo "usage: $0 [-t SECONDS] [TARGET...]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[[ "$SECONDS_EACH" =~ ^[0-9]+$ ]] || { echo "$0: -t takes whole seconds, not '$SECONDS_EACH'" >&2; exit 2; }
[ "$SECONDS_EACH" -ge 600 ] || echo "$0: note: $SECONDS_EACH s per target is under the 10 minutes #12 asks for" >&2

mapfile -t TARGETS < <(find "$FUZZ/fuzz_targets" -name '*.rs' -printf '%f\n' | sed 's/\.rs$//' | sort)
rerun=""
if [ "$#" -gt 0 ]; then
    for target in "$@"; do
        [ -f "$FUZZ/fuzz_targets/$target.rs" ] || { echo "$0: no target '$target' in $FUZZ/fuzz_targets" >&2; exit 2; }
    done
    TARGETS=("$@")
    rerun=1
fi
[ "${#TARGETS[@]}" -gt 0 ] || { echo "$0: no targets in $FUZZ/fuzz_targets" >&2; exit 2; }

started="$(date -u +%Y-%m-%dT%H:%MZ)"
commit="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
toolchain="$(rustc +nightly --version 2>/dev/null || echo 'nightly: unknown')"
marker="$(mktemp)"
trap 'rm -f "$marker"' EXIT
rows=()
failed=0

# The first match of a `stat::` line, or of a field of the `DONE` line.
stat_of() { grep -oE "^stat::$1:[[:space:]]*[0-9]+" "$2" | tail -1 | grep -oE '[0-9]+$' || echo "?"; }
done_field() { grep -E '^#[0-9]+[[:space:]]+DONE' "$2" | tail -1 | grep -oE "$1: [0-9]+(/[0-9]+[a-zA-Z]*)?" | cut -d' ' -f2 || true; }

for target in "${TARGETS[@]}"; do
    touch "$marker"
    bash "$FUZZ/run.sh" -t "$SECONDS_EACH" "$target"
    status=$?
    log="$FUZZ/logs/$target.log"
    execs="$(stat_of number_of_executed_units "$log")"
    rate="$(stat_of average_exec_per_sec "$log")"
    cov="$(done_field cov "$log")"
    corp="$(done_field corp "$log")"
    corpus_files="$(find "$FUZZ/corpus/$target" -type f 2>/dev/null | wc -l)"
    corpus_bytes="$(du -sb "$FUZZ/corpus/$target" 2>/dev/null | cut -f1)"
    crashes="$(find "$FUZZ/artifacts/$target" -type f -newer "$marker" 2>/dev/null | wc -l)"
    verdict="ok"
    if [ "$status" -ne 0 ] || [ "$crashes" -gt 0 ]; then
        verdict="FAILED (exit $status): $(find "$FUZZ/artifacts/$target" -type f -newer "$marker" -printf '%f ' 2>/dev/null)"
        failed=1
    fi
    rows+=("| \`$target\` | $SECONDS_EACH | $execs | $rate | ${cov:-?} | ${corp:-?} | $corpus_files files, $((${corpus_bytes:-0} / 1024)) KiB | $crashes | $verdict |")
    echo "== $target: $execs executions ($rate/s), coverage ${cov:-?}, corpus ${corp:-?} ($corpus_files files kept), $crashes crashes: $verdict"
done

table() {
    echo "| target | seconds | executions | exec/s | coverage (edges) | corpus in the run (inputs/bytes) | kept in fuzz/corpus | crashes | result |"
    echo "|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
}
if [ -n "$rerun" ] && [ -f "$FUZZ/RESULTS.md" ]; then
    {
        echo
        echo "## Rerun: ${TARGETS[*]}"
        echo
        echo "- started: $started, commit \`$commit\`, $toolchain"
        echo "- command: \`nice -n 10 bash fuzz/campaign.sh -t $SECONDS_EACH ${TARGETS[*]}\`"
        echo
        table
    } >> "$FUZZ/RESULTS.md"
    echo "== rerun appended to fuzz/RESULTS.md"
    exit "$failed"
fi
{
    echo "# Fuzzing results"
    echo
    echo "Written by \`fuzz/campaign.sh\` (do not edit by hand; rerun it; reruns of single"
    echo "targets are appended below the first table). Every target of"
    echo "\`fuzz/fuzz_targets/\`, one libFuzzer process at a time, seeded as \`fuzz/run.sh\`"
    echo "describes. \"corpus in the run\" is libFuzzer's own count at the end (seeds included);"
    echo "\"kept\" is what it wrote to \`fuzz/corpus/<target>/\` (gitignored), earlier runs included."
    echo
    echo "- started: $started, commit \`$commit\`, $toolchain"
    echo "- command: \`nice -n 10 bash fuzz/campaign.sh -t $SECONDS_EACH\`"
    echo "- machine: $(nproc) cores, shared with other work while it ran (exec/s are lower than on a quiet machine)"
    echo
    table
} > "$FUZZ/RESULTS.md"
echo "== summary written to fuzz/RESULTS.md"
exit "$failed"

#!/usr/bin/env bash
# fuzz/run.sh — runs the cargo-fuzz targets of ecp-protocol one after another
# (one libFuzzer process at a time), each for SECONDS, seeded from the
# project's test data, and keeps each run's log under fuzz/logs/.
#
#   bash fuzz/run.sh [-t SECONDS] [TARGET...]     default: 300 s, every target
#
# Needs `cargo +nightly` and `cargo install cargo-fuzz`; see fuzz/README.md.
# Builds go to ECP_FUZZ_TARGET_DIR (default: target-fuzz beside the checkout),
# apart from the stable builds of the root workspace.
set -euo pipefail

FUZZ="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$FUZZ")"
TARGETS=(update_merge frontmatter scanner bundle_listing signature)
SECONDS_EACH=300

while getopts "t:" opt; do
    case "$opt" in
        t) SECONDS_EACH="$OPTARG" ;;
        *) echo "usage: $0 [-t SECONDS] [TARGET...]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ "$#" -gt 0 ] && TARGETS=("$@")

export CARGO_TARGET_DIR="${ECP_FUZZ_TARGET_DIR:-$(dirname "$ROOT")/target-fuzz}"

# Seeds come from protocol/testdata (and ../shared when it is there); they are
# regenerated on every run into a gitignored folder.
rm -rf "$FUZZ/seeds"
python3 "$FUZZ/seeds.py" "$FUZZ/seeds"
mkdir -p "$FUZZ/logs"

cd "$ROOT"
for target in "${TARGETS[@]}"; do
    # libFuzzer writes new inputs to the first folder only: the gitignored
    # working corpus. The others are read-only seeds.
    corpus=("$FUZZ/corpus/$target")
    mkdir -p "${corpus[0]}"
    [ -d "$FUZZ/seeds/$target" ] && corpus+=("$FUZZ/seeds/$target")
    corpus+=("$ROOT/protocol/testdata/fuzz-regressions/$target")
    case "$target" in
        frontmatter | scanner) corpus+=("$ROOT/protocol/testdata/scan-corpus") ;;
    esac
    dict=()
    [ -f "$FUZZ/dicts/$target.dict" ] && dict=("-dict=$FUZZ/dicts/$target.dict")
    log="$FUZZ/logs/$target.log"
    echo "== $target: ${SECONDS_EACH}s, log $log"
    # -timeout: a unit slower than 10 s is a bug (every parser here is meant to
    # be linear); -rss_limit_mb: bounded memory, the machine is shared.
    set +e
    cargo +nightly fuzz run "$target" "${corpus[@]}" -- \
        -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 "${dict[@]}" 2>&1 | tee "$log" | grep --line-buffered -E '^#[0-9]+[[:space:]]+(INITED|pulse)|^==[0-9]+==|panicked at'
    status="${PIPESTATUS[0]}"
    set -e
    grep -E '^#[0-9]+[[:space:]]+DONE|^Done|^stat::|^SUMMARY' "$log" || true
    if [ "$status" -ne 0 ]; then
        echo "== $target FAILED (exit $status): the input is in fuzz/artifacts/$target/" >&2
        exit "$status"
    fi
done

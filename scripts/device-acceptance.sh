#!/usr/bin/env bash
# Device acceptance run, for anyone with a trn1, trn2 or inf2: runs every device-facing path of
# neurondoctor and writes ONE archive whose members, attached to an issue, confirm or correct what the doctor
# assumes about real devices (the sysfs tree under driver 2.31, neuron-ls 2.34's JSON, core counts at LNC=2, what
# the driver's install leaves loaded).
#
#   bash scripts/device-acceptance.sh [-o ARCHIVE] [--python EXE]...
#
# It refuses to run without a Neuron device (exit 4) and changes nothing on the host: every compile goes to a cache
# in a temporary folder, health runs as --dry-run, nothing is installed, loaded or restarted; it writes only the
# archive (default ./neurondoctor-device-acceptance-HOST-UTC.tar.gz, never over an existing file) and removes its
# temporary folder. Every command has a deadline. Secrets: the doctor's own outputs are redacted (its bundle is
# included as it writes it); the raw tool outputs here carry device facts, process ids and host names, no
# environment but the NEURON_* variables.
#
# ND_ACCEPT_ROOT (tests only) reads /dev and /sys under another tree and passes --root to the doctor; the tools
# are taken from PATH, so tests put recording fakes there.
set -u
set -o pipefail

ROOT="${ND_ACCEPT_ROOT:-}"
DOCTOR="${NEURONDOCTOR:-neurondoctor}"
OUTPUT=""
PYTHONS=()
while [ $# -gt 0 ]; do
    case "$1" in
        -o|--output) OUTPUT="${2:?-o needs a path}"; shift 2 ;;
        --python) PYTHONS+=("${2:?--python needs an interpreter}"); shift 2 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "error: unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done

shopt -s nullglob
devices=("$ROOT"/dev/neuron[0-9]*)
shopt -u nullglob
if [ ${#devices[@]} -eq 0 ]; then
    echo "error: no Neuron device (${ROOT}/dev/neuron*): this run is for a trn1, trn2 or inf2; nothing was done" >&2
    exit 4
fi
if ! command -v "$DOCTOR" >/dev/null 2>&1; then
    echo "error: $DOCTOR is not on PATH (install neurondoctor, or set NEURONDOCTOR=/path/to/neurondoctor)" >&2
    exit 2
fi

host="$(hostname -s 2>/dev/null || echo host)"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
OUTPUT="${OUTPUT:-./neurondoctor-device-acceptance-${host}-${stamp}.tar.gz}"
if [ -e "$OUTPUT" ] || [ -L "$OUTPUT" ]; then
    echo "error: $OUTPUT exists; name another path with -o (nothing is written over)" >&2
    exit 2
fi

work="$(mktemp -d -t neurondoctor-acceptance.XXXXXX)" || exit 3
trap 'rm -rf -- "$work"' EXIT
out="$work/device-acceptance"
mkdir -p "$out/formats" "$out/sysfs" "$work/cache"
manifest="$out/MANIFEST.tsv"
printf 'member\texit\tseconds\tcommand\n' >"$manifest"

# The compile cache of every probe goes here, never to the host's /var/tmp/neuron-compile-cache.
export NEURON_CC_FLAGS="${NEURON_CC_FLAGS:-} --cache_dir=$work/cache"
export NEURON_COMPILE_CACHE_URL="$work/cache"
root_flag=()
[ -n "$ROOT" ] && root_flag=(--root "$ROOT")

# run MEMBER SECONDS COMMAND...: stdout to MEMBER, stderr to MEMBER.stderr, a manifest line either way.
run() {
    local member="$1" seconds="$2"
    shift 2
    local started ended status
    started="$(date +%s)"
    timeout --kill-after=10 "$seconds" "$@" >"$out/$member" 2>"$out/$member.stderr" </dev/null
    status=$?
    ended="$(date +%s)"
    printf '%s\t%s\t%s\t%s\n' "$member" "$status" "$((ended - started))" "$*" >>"$manifest"
    [ -s "$out/$member.stderr" ] || rm -f "$out/$member.stderr"
    return 0
}

echo "neurondoctor device acceptance: ${#devices[@]} device node(s); writing $OUTPUT" >&2

# The doctor's own paths.
run check.json 300 "$DOCTOR" check --json "${root_flag[@]}"
run check.txt 300 "$DOCTOR" check -v "${root_flag[@]}"
run health.json 120 "$DOCTOR" health --slurm --dry-run --json "${root_flag[@]}"
if [ ${#PYTHONS[@]} -eq 0 ]; then
    run canary.json 1800 "$DOCTOR" probe canary --json
    run canary-perf.json 1800 "$DOCTOR" probe canary --perf --json
    run probe-ops-xla.json 1800 "$DOCTOR" probe ops builtin:mlp --mode xla --json
else
    index=0
    for python in "${PYTHONS[@]}"; do
        index=$((index + 1))
        run "canary-$index.json" 1800 "$DOCTOR" probe canary --python "$python" --json
        run "canary-perf-$index.json" 1800 "$DOCTOR" probe canary --perf --python "$python" --json
        run "probe-ops-xla-$index.json" 1800 "$DOCTOR" probe ops builtin:mlp --mode xla --python "$python" --json
    done
fi
run bundle.log 300 "$DOCTOR" bundle -o "$out/bundle.tar.gz" "${root_flag[@]}"

# The tools' own outputs, for the formats the doctor parses (none of these change anything).
run formats/neuron-ls.txt 60 neuron-ls
run formats/neuron-ls-j.json 60 neuron-ls -j
run formats/neuron-ls-output-format-json.json 60 neuron-ls --output-format json
run formats/neuron-ls-version.txt 30 neuron-ls --version
run formats/neuron-monitor-first-record.json 30 sh -c 'neuron-monitor | head -n 1'
run formats/nccom-test-version.txt 30 nccom-test --version
run formats/modinfo-neuron.txt 30 modinfo neuron
run formats/lsmod.txt 30 lsmod
run formats/dkms-status.txt 30 dkms status
run formats/dmesg-neuron.txt 30 sh -c 'dmesg 2>&1 | grep -i -e neuron -e NEURON_HW_ERR | tail -n 2000'
run formats/packages.txt 60 sh -c 'dpkg-query -W "aws-neuronx*" 2>/dev/null || rpm -qa "aws-neuronx*"'
run formats/uname.txt 10 uname -a
run formats/os-release.txt 10 cat "$ROOT/etc/os-release"
run formats/module-version.txt 10 cat "$ROOT/sys/module/neuron/version"
run formats/dev-neuron.txt 10 sh -c 'ls -l "$1"/dev/neuron*' sh "$ROOT"
run formats/modules-load.txt 10 sh -c 'grep -rs neuron "$1"/etc/modules-load.d "$1"/usr/lib/modules-load.d "$1"/etc/modprobe.d; true' sh "$ROOT"
env | grep -E '^(NEURON_|FI_EFA_)' | sort >"$out/formats/environment.txt" || true

# The sysfs tree the driver made: every small attribute's path and value (read with a deadline: some block).
sysfs_count=0
for base in "$ROOT/sys/devices/virtual/neuron_device" "$ROOT/sys/class/neuron_device"; do
    [ -d "$base" ] || continue
    while IFS= read -r -d '' file; do
        sysfs_count=$((sysfs_count + 1))
        [ "$sysfs_count" -gt 20000 ] && break
        value="$(timeout 2 head -c 512 -- "$file" 2>&1 | tr '\n' ' ')"
        printf '%s\t%s\n' "${file#"$ROOT"}" "$value"
    done < <(find "$base" -maxdepth 6 \( -type f -o -type l \) -print0 2>/dev/null)
done >"$out/sysfs/attributes.tsv"
find "$ROOT/sys/devices/virtual/neuron_device" -maxdepth 6 2>/dev/null | sed "s|^$ROOT||" >"$out/sysfs/tree.txt" || true

tar -czf "$work/archive.tar.gz" -C "$work" device-acceptance || exit 3
if [ -e "$OUTPUT" ] || [ -L "$OUTPUT" ]; then
    echo "error: $OUTPUT appeared while the run went on; the archive was not written" >&2
    exit 3
fi
mv -n -- "$work/archive.tar.gz" "$OUTPUT" || exit 3
echo "wrote $OUTPUT ($(wc -l <"$manifest" | tr -d ' ') lines in MANIFEST.tsv); attach it to an issue" >&2

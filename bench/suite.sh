#!/usr/bin/env bash
# The benchmark suite of the performance issue: generates the inputs, runs
# extshuffle and its peers side by side on the same data and memory budget, and
# appends one "BENCH suite ..." line per run to the results file, for
# bench/suite_report.py to turn into the tables, goals and plots of
# docs/benchmarks.md.
#
# usage: bench/suite.sh [--quick] [--cases NAME,NAME,...] [--append] [--estimate] [--list]
#   --quick     sizes / 16, budget 128M instead of 512M, 1 repeat: validates the
#               suite in a few minutes (results: bench/results/suite_quick.txt)
#   --cases     run only these cases (see --list); default: all
#   --append    add to the results file instead of starting it afresh
#   --estimate  print the estimated duration and exit
# environment:
#   REPEATS=3        runs of every tool in every case (the median is reported)
#   SLOW_REPEATS=1   runs of the slowest peers: sort -R (all text cases) and
#                    STXXL random_shuffle on 8 GiB (see docs/benchmarks.md)
#   SCALING_REPEATS=1  runs of each tool at each size of the scaling case
#   BUILD_DIR=build  where extshuffle and build/bench/* are
#   DIR=${TMPDIR:-/tmp}/extshuffle-suite   scratch directory for inputs and outputs
#   OUT=bench/results/suite.txt            results file
#   MEMORY=512M      the budget of the larger-than-memory cases
#   RUN_TIMEOUT=3600 seconds before one run is killed (status=timeout)
#   TERASHUF=path    the terashuf binary for jsonl_heavy (skipped when unset; built from
#                    github.com/alexandres/terashuf: g++ -std=c++11 -O3 terashuf.cc)
#   JSONL_HEAVY_MIB=2048, IN_RAM_MIB=2048, IN_RAM_NPY_MIB=512  sizes of those cases
#   TOOLS="extshuffle cat_two_pass ..."  run only these tools of each case
#                    (default: all), to refresh some figures with --append
#
# Each line: BENCH suite case=C tool=T format=fixed|lines record_size=R bytes=B
#   memory=M budget_bytes=BB threads=J run=K status=ok|failed|timeout exit=E
#   seconds=S user_seconds=U sys_seconds=Y peak_rss_bytes=P caches=dropped|warm
#   permutation=yes|no|unchecked [stats_<field>=... from extshuffle's --stats]
# Wall time is taken around the whole command (process start included); peak
# RSS and CPU time come from GNU time (/usr/bin/time -f %M: the largest of the
# process tree). The page cache is dropped before every run when we are root.
# LC_ALL=C for sort and shuf (byte order, no locale transform: their fastest).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

ALL_CASES="fixed8_1g fixed8_8g text_1g text_4g fixed4k_4g scaling threads dataset64 jsonl_heavy tar_wds in_ram_fixed8 in_ram_fixed32 in_ram_npy512"
quick=0
append=0
estimate_only=0
cases="$ALL_CASES"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --append) append=1 ;;
    --estimate) estimate_only=1 ;;
    --cases) shift; cases=$(echo "${1:-}" | tr ',' ' ') ;;
    --cases=*) cases=$(echo "${1#--cases=}" | tr ',' ' ') ;;
    --list)
      cat <<'EOF'
fixed8_1g   8-byte records, 1 GiB, default budget: extshuffle, cat x2, cat, STXXL random_shuffle
fixed8_8g   8-byte records, 8 GiB, -S 512M: extshuffle, cat x2, cat, STXXL random_shuffle
text_1g     lines of 20-200 bytes, 1 GiB, default budget: extshuffle, cat x2, cat, shuf, sort -R
text_4g     lines of 20-200 bytes, 4 GiB, -S 512M: extshuffle, cat x2, cat, sort -R -S 512M
fixed4k_4g  4096-byte records, 4 GiB, -S 512M: extshuffle, cat x2, cat, STXXL random_shuffle
scaling     8-byte records, 64 MiB .. 8 GiB, -S 512M: extshuffle, cat x2, cat
            (8 GiB comes from fixed8_8g when both run)
threads     8-byte records, 1 GiB, -S 512M: extshuffle -j 1 and -j 2
dataset64   lines of 20-200 bytes, 1 GiB, -S 512M: extshuffle one file in and out, one file in and
            64 shards out (--shards 64), 64 files in (a directory) and one out
jsonl_heavy JSONL of lognormal sizes (median 440 B, tail to 200 KB), 2 GiB: extshuffle at
            -S 256M against the durable two-pass floor (cat x2; sync) and terashuf
            (when TERASHUF names it), at -S 16M, and at the default budget (in RAM)
            against the durable one-pass floor and shuf
tar_wds     WebDataset tar samples of 100 KB-1 MB, 2 GiB, -S 256M: extshuffle against the durable
            two-pass floor (cat x2; sync)
in_ram_fixed8  8-byte records, IN_RAM_MIB (default 2048), in RAM (default budget), at -S 256M and
            at -S one eighth of the input: extshuffle, the durable one- and two-pass floors,
            STXXL random_shuffle (in RAM)
in_ram_fixed32 32-byte records, IN_RAM_MIB (default 2048), in RAM (default budget) and at -S 256M:
            extshuffle, the durable one- and two-pass floors
in_ram_npy512  .npy of 512-byte rows, IN_RAM_NPY_MIB (default 512), at -S 1.17x and 2.15x the
            input, the default budget and one eighth of the input: extshuffle, the durable
            one-pass floor
EOF
      exit 0 ;;
    -h|--help) sed -n '2,38p' "$0"; exit 0 ;;
    *) echo "suite.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
for c in $cases; do
  case " $ALL_CASES " in *" $c "*) ;; *) echo "suite.sh: unknown case: $c (see --list)" >&2; exit 2 ;; esac
done

BUILD_DIR=${BUILD_DIR:-build}
DIR=${DIR:-${TMPDIR:-/tmp}/extshuffle-suite}
RUN_TIMEOUT=${RUN_TIMEOUT:-3600}
if [ $quick = 1 ]; then
  REPEATS=${REPEATS:-1}
  SLOW_REPEATS=${SLOW_REPEATS:-1}
  SCALING_REPEATS=${SCALING_REPEATS:-1}
  MEMORY=${MEMORY:-128M}
  OUT=${OUT:-bench/results/suite_quick.txt}
  SCALE=16
else
  REPEATS=${REPEATS:-3}
  SLOW_REPEATS=${SLOW_REPEATS:-1}
  SCALING_REPEATS=${SCALING_REPEATS:-1}
  MEMORY=${MEMORY:-512M}
  OUT=${OUT:-bench/results/suite.txt}
  SCALE=1
fi
export LC_ALL=C

extshuffle=$BUILD_DIR/extshuffle
digest=$BUILD_DIR/bench/record_digest
gen_lines=$BUILD_DIR/bench/generate_lines
gen_jsonl=$BUILD_DIR/bench/generate_jsonl
stxxl_shuffle=$BUILD_DIR/bench/stxxl_random_shuffle

# --- sizes ------------------------------------------------------------------
mib() { echo $(( $1 * 1024 * 1024 / SCALE )); }   # a full-suite size in MiB, scaled
to_bytes() {  # 512M -> 536870912 (K, M, G: powers of 1024)
  local v=${1%[KMGkmg]} u=${1##*[0-9]}
  case "$u" in K|k) echo $((v << 10)) ;; M|m) echo $((v << 20)) ;; G|g) echo $((v << 30)) ;; *) echo "$v" ;; esac
}
# The default budget as extshuffle computes it: the lesser of half the physical
# memory and the cgroup limit.
default_budget_bytes() {
  local total limit
  total=$(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024 / 2 ))
  for f in /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes; do
    if [ -r "$f" ]; then
      limit=$(cat "$f")
      if [[ "$limit" =~ ^[0-9]+$ ]] && (( limit < total )); then total=$limit; fi
    fi
  done
  echo "$total"
}
default_bytes=$(default_budget_bytes)

scaling_sizes() {  # 64M, 128M, ... 8G (scaled); 8G is left to fixed8_8g when it runs too
  local s top
  s=$(mib 64)
  top=$(mib 8192)
  while (( s <= top )); do
    if ! { (( s == top )) && [[ " $cases " == *" fixed8_8g "* ]]; }; then echo "$s"; fi
    s=$((s * 2))
  done
}

# --- the duration model -----------------------------------------------------
# Seconds per GiB on the development VM (2 cores, one virtual disk) when it is
# quiet, from the quick validation runs and earlier full-size runs (see the
# "Duration" note in docs/benchmarks.md); used only for the estimate printed
# at the start. gen: input generation, digest: one permutation check.
rate() {
  case "$1" in
    gen_fixed) echo 1.5 ;; gen_lines) echo 2.0 ;; digest) echo 1.0 ;; drop) echo 0.3 ;;
    cat_two_pass) echo 2.4 ;; cat_one_pass) echo 1.4 ;; gen_jsonl) echo 1.5 ;;
    cat_two_pass_sync) echo 3.0 ;; cat_one_pass_sync) echo 1.8 ;; terashuf) echo 8 ;;
    extshuffle_jsonl) echo 9 ;;
    extshuffle) echo 7.5 ;; extshuffle_j1) echo 12 ;; extshuffle_lines) echo 10 ;;
    extshuffle_4k) echo 3 ;;
    stxxl) echo 16 ;; stxxl_4k) echo 5 ;;
    shuf) echo 5 ;; sort_r) echo 180 ;;
  esac
}
# estimate_case GIB "TOOL[:slow|:once] ...": the estimated seconds of a case
# whose input is GIB GiB. TOOL runs REPEATS times, TOOL:slow SLOW_REPEATS
# times, each followed by a cache drop and one digest of its output;
# TOOL:once (input generation and its digest) runs once.
estimate_case() {
  local rates="" k
  for k in gen_fixed gen_lines gen_jsonl digest drop cat_two_pass cat_one_pass cat_two_pass_sync \
           cat_one_pass_sync terashuf extshuffle_jsonl extshuffle extshuffle_j1 \
           extshuffle_lines extshuffle_4k stxxl stxxl_4k shuf sort_r; do rates+="$k=$(rate $k) "; done
  awk -v g="$1" -v r="$REPEATS" -v sr="$SLOW_REPEATS" -v spec="$2" -v rates="$rates" 'BEGIN {
    n = split(rates, kv, " "); for (i = 1; i <= n; i++) { split(kv[i], p, "="); rate[p[1]] = p[2] }
    n = split(spec, tools, " "); total = 0
    for (i = 1; i <= n; i++) {
      m = split(tools[i], p, ":")
      if (p[2] == "once") { total += g * rate[p[1]]; continue }
      reps = (p[2] == "slow") ? sr : r
      total += reps * g * (rate[p[1]] + rate["drop"] + rate["digest"])
    }
    printf "%.0f", total }'
}
gib() { awk -v b="$1" 'BEGIN { print b / 2^30 }'; }
estimate_seconds() {  # estimated seconds of case $1
  case "$1" in
    fixed8_1g) estimate_case "$(gib "$(mib 1024)")" "gen_fixed:once digest:once cat_two_pass cat_one_pass cat_one_pass_sync extshuffle stxxl" ;;
    fixed8_8g) estimate_case "$(gib "$(mib 8192)")" "gen_fixed:once digest:once cat_two_pass cat_two_pass_sync cat_one_pass extshuffle stxxl:slow" ;;
    text_1g) estimate_case "$(gib "$(mib 1024)")" "gen_lines:once digest:once cat_two_pass cat_one_pass extshuffle_lines shuf sort_r:slow" ;;
    text_4g) estimate_case "$(gib "$(mib 4096)")" "gen_lines:once digest:once cat_two_pass cat_two_pass_sync cat_one_pass extshuffle_lines sort_r:slow" ;;
    fixed4k_4g) estimate_case "$(gib "$(mib 4096)")" "gen_fixed:once digest:once cat_two_pass cat_two_pass_sync cat_one_pass extshuffle_4k stxxl_4k" ;;
    scaling) REPEATS=$SCALING_REPEATS estimate_case "$(gib "$(scaling_sizes | awk '{ s += $1 } END { print s }')")" "gen_fixed:once digest:once cat_two_pass cat_one_pass extshuffle" ;;
    threads) estimate_case "$(gib "$(mib 1024)")" "gen_fixed:once digest:once extshuffle_j1 extshuffle" ;;
    jsonl_heavy) estimate_case "$(gib "$(mib "${JSONL_HEAVY_MIB:-2048}")")" "gen_jsonl:once digest:once cat_two_pass_sync terashuf extshuffle_jsonl extshuffle_jsonl extshuffle_jsonl cat_one_pass_sync shuf" ;;
    dataset64) estimate_case "$(gib "$(mib 1024)")" "gen_lines:once digest:once extshuffle_lines extshuffle_lines extshuffle_lines" ;;
    tar_wds) estimate_case "$(gib "$(mib "${TAR_WDS_MIB:-2048}")")" "gen_jsonl:once digest:once cat_two_pass_sync extshuffle" ;;
    in_ram_fixed8) estimate_case "$(gib "$(mib "${IN_RAM_MIB:-2048}")")" "gen_fixed:once digest:once cat_one_pass_sync cat_two_pass_sync extshuffle extshuffle extshuffle stxxl" ;;
    in_ram_fixed32) estimate_case "$(gib "$(mib "${IN_RAM_MIB:-2048}")")" "gen_fixed:once digest:once cat_one_pass_sync cat_two_pass_sync extshuffle extshuffle" ;;
    in_ram_npy512) estimate_case "$(gib "$(mib "${IN_RAM_NPY_MIB:-512}")")" "gen_fixed:once digest:once cat_one_pass_sync extshuffle_4k extshuffle_4k extshuffle_4k extshuffle_4k" ;;
  esac
}
# The sum of all cases, whichever are selected, and the selected ones.
print_estimate() {
  local c s total=0
  for c in $cases; do
    s=$(estimate_seconds "$c")
    total=$((total + s))
    printf '  %-11s ~%4d s\n' "$c" "$s"
  done
  printf '  %-11s ~%4d s (~%d min), REPEATS=%s SLOW_REPEATS=%s SCALING_REPEATS=%s\n' total "$total" \
    $(((total + 59) / 60)) "$REPEATS" "$SLOW_REPEATS" "$SCALING_REPEATS"
}

echo "suite.sh: estimated duration on a quiet development VM:" >&2
print_estimate >&2
if [ $quick = 1 ] || [ "$cases" != "$ALL_CASES" ]; then
  full=$(SCALE=1 REPEATS=3 SLOW_REPEATS=1 SCALING_REPEATS=1 cases=$ALL_CASES; print_estimate | tail -1 | sed 's/^ *total *//')
  echo "  (the full suite, all cases at full size with the default repeats: $full)" >&2
fi
[ $estimate_only = 1 ] && exit 0

# --- checks -----------------------------------------------------------------
for f in "$extshuffle" "$digest" "$gen_lines" "$gen_jsonl" "$stxxl_shuffle"; do
  if [ ! -x "$f" ]; then
    echo "suite.sh: $f is missing: cmake --build $BUILD_DIR --target extshuffle record_digest generate_lines generate_jsonl stxxl_random_shuffle" >&2
    exit 1
  fi
done
have_time=1
if [ ! -x /usr/bin/time ] || ! /usr/bin/time -f %M true >/dev/null 2>&1; then
  have_time=0
  echo "suite.sh: GNU time (/usr/bin/time) is missing: peak RSS and CPU time are not measured" >&2
fi
can_drop=0
if [ "$(id -u)" = 0 ] && sync && echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; then can_drop=1; fi
[ $can_drop = 1 ] || echo "suite.sh: not root: the page cache is not dropped between runs (caches=warm)" >&2
mkdir -p "$DIR" "$(dirname "$OUT")"
need_gb=$(( quick ? 3 : 26 ))
free_gb=$(df -P -k "$DIR" | awk 'NR == 2 { print int($4 / 1024 / 1024) }')
if (( free_gb < need_gb )); then
  echo "suite.sh: $DIR has ${free_gb} GB free, the suite needs ~${need_gb} GB" >&2
  exit 1
fi

# --- running and recording --------------------------------------------------
in_file=""; out_file="$DIR/out.data"; tmp_file="$DIR/tmp.data"
cleanup() { rm -f "$DIR"/in.* "$out_file" "$tmp_file" "$DIR"/time.txt "$DIR"/stderr.txt; }
trap 'cleanup; exit 130' INT TERM
trap cleanup EXIT

if [ $append = 0 ]; then : > "$OUT"; fi
{
  echo "# command: bench/suite.sh $([ $quick = 1 ] && echo '--quick ')--cases $(echo "$cases" | tr ' ' ',')"
  echo "# settings: REPEATS=$REPEATS SLOW_REPEATS=$SLOW_REPEATS SCALING_REPEATS=$SCALING_REPEATS MEMORY=$MEMORY BUILD_DIR=$BUILD_DIR DIR=$DIR quick=$quick"
  echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# host: $(nproc) cores, $(awk '/^model name/ { $1 = $2 = $3 = ""; print; exit }' /proc/cpuinfo | sed 's/^ *//'), $(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM, kernel $(uname -r)"
  echo "# commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$( [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && echo ' (with uncommitted changes)')"
  echo "# extshuffle: $("$extshuffle" --version 2>&1 | head -1)"
  echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >> "$OUT"

drop_caches() { if [ $can_drop = 1 ]; then sync; echo 3 > /proc/sys/vm/drop_caches; fi; }
caches_word() { [ $can_drop = 1 ] && echo dropped || echo warm; }

# measure COMMAND...: runs COMMAND (its stdout to /dev/null), records
# the outcome in the globals m_status m_exit m_seconds m_user m_sys m_rss
# m_result (the RESULT line of --stats, if any) and m_error.
measure() {
  local t0 t1
  drop_caches
  rm -f "$DIR/time.txt"
  t0=$(date +%s%N)
  if [ $have_time = 1 ]; then
    /usr/bin/time -f "%U %S %M" -o "$DIR/time.txt" timeout "$RUN_TIMEOUT" "$@" > /dev/null 2> "$DIR/stderr.txt"
  else
    timeout "$RUN_TIMEOUT" "$@" > /dev/null 2> "$DIR/stderr.txt"
  fi
  m_exit=$?
  t1=$(date +%s%N)
  m_seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
  m_user=-1; m_sys=-1; m_rss=-1
  if [ $have_time = 1 ] && [ -s "$DIR/time.txt" ]; then
    read -r m_user m_sys m_rss < <(tail -1 "$DIR/time.txt")
    m_rss=$((m_rss * 1024))
  fi
  case $m_exit in 0) m_status=ok ;; 124|137) m_status=timeout ;; *) m_status=failed ;; esac
  m_result=$(grep -m1 '^RESULT ' "$DIR/stderr.txt" | sed 's/^RESULT //')
  m_error=$(grep -v '^RESULT \|^\[STXXL' "$DIR/stderr.txt" | head -1 | tr -s '\t ' ' ' | cut -c1-200)
}

in_digest=""
# check_permutation FORMAT RECORD_SIZE FILE: yes, no (or unchecked when it failed)
check_permutation() {
  local d
  if [ "$m_status" != ok ]; then echo unchecked; return; fi
  if [ "$1" = lines ] || [ "$1" = jsonl ]; then d=$("$digest" "$3" --lines 2>/dev/null); else d=$("$digest" "$3" "$2" 2>/dev/null); fi
  [ -n "$d" ] && [ "$d" = "$in_digest" ] && echo yes || echo no
}

# record CASE TOOL FORMAT RECORD_SIZE BYTES MEMORY BUDGET THREADS RUN PERMUTATION
record() {
  local stats=""
  if [ -n "$m_result" ]; then stats=$(echo "$m_result" | awk '{ for (i = 1; i <= NF; i++) printf " stats_%s", $i }'); fi
  echo "BENCH suite case=$1 tool=$2 format=$3 record_size=$4 bytes=$5 memory=$6 budget_bytes=$7 threads=$8 run=$9 status=$m_status exit=$m_exit seconds=$m_seconds user_seconds=$m_user sys_seconds=$m_sys peak_rss_bytes=$m_rss caches=$(caches_word) permutation=${10}$stats" | tee -a "$OUT"
  if [ "$m_status" != ok ] && [ -n "$m_error" ]; then echo "# $1 $2 run=$9: $m_error" | tee -a "$OUT"; fi
}

# make_input FORMAT RECORD_SIZE BYTES: writes $DIR/in.<format> and its digest
make_input() {
  local t0 t1
  rm -f "$DIR"/in.*
  t0=$(date +%s%N)
  if [ "$1" = jsonl ]; then
    in_file="$DIR/in.jsonl"
    "$gen_jsonl" "$in_file" "$3" 1 2>/dev/null || { echo "suite.sh: generate_jsonl failed" >&2; exit 1; }
    in_digest=$("$digest" "$in_file" --lines)
  elif [ "$1" = npy ]; then
    # A .npy of BYTES / RECORD_SIZE rows of RECORD_SIZE bytes (dtype |u1),
    # its header padded to one row, so that the digest of the whole file by
    # rows checks the rows (the header is the same in input and output).
    in_file="$DIR/in.npy"
    { printf '\x93NUMPY\x01\x00'
      awk -v rows="$(( $3 / $2 ))" -v rs="$2" 'BEGIN {
        d = sprintf("{\047descr\047: \047|u1\047, \047fortran_order\047: False, \047shape\047: (%d, %d), }", rows, rs)
        while (length(d) + 11 < rs) d = d " "
        len = length(d) + 1; printf "%c%c%s\n", len % 256, int(len / 256), d }'
    } > "$in_file"
    "$gen_lines" "$DIR/in.rows" "$3" 1 --binary 2>/dev/null || { echo "suite.sh: generate_lines failed" >&2; exit 1; }
    cat "$DIR/in.rows" >> "$in_file" && rm -f "$DIR/in.rows"
    in_digest=$("$digest" "$in_file" "$2")
  elif [ "$1" = lines ]; then
    in_file="$DIR/in.txt"
    "$gen_lines" "$in_file" "$3" 1 2>/dev/null || { echo "suite.sh: generate_lines failed" >&2; exit 1; }
    in_digest=$("$digest" "$in_file" --lines)
  else
    in_file="$DIR/in.bin"
    "$gen_lines" "$in_file" "$3" 1 --binary 2>/dev/null || { echo "suite.sh: generate_lines failed" >&2; exit 1; }
    in_digest=$("$digest" "$in_file" "$2")
  fi
  t1=$(date +%s%N)
  echo "# input $1 record_size=$2 bytes=$3 generated and digested in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }') s: $in_digest" | tee -a "$OUT"
}

# run_tool CASE TOOL FORMAT RECORD_SIZE BYTES MEMORY RUN [THREADS]
# MEMORY is "default" or a size such as 512M.
run_tool() {
  local case=$1 tool=$2 format=$3 rs=$4 bytes=$5 memory=$6 run=$7 threads=${8:-$(nproc)}
  local budget mem_args=() perm check=1
  if [ "$memory" = default ]; then budget=$default_bytes; else budget=$(to_bytes "$memory"); mem_args=(-S "$memory"); fi
  local fmt_args=()
  [ "$format" = fixed ] && fmt_args=(--record-size "$rs")
  rm -f "$out_file" "$tmp_file"
  case "$tool" in
    extshuffle)
      measure "$extshuffle" "$in_file" "$out_file" --seed "$run" "${fmt_args[@]}" "${mem_args[@]}" -T "$DIR" -j "$threads" --stats ;;
    cat_two_pass)
      measure bash -c 'cat "$1" > "$2" && cat "$2" > "$3"' _ "$in_file" "$tmp_file" "$out_file"
      (( run == 1 )) || check=0 ;;
    cat_one_pass)
      measure bash -c 'cat "$1" > "$2"' _ "$in_file" "$out_file"
      (( run == 1 )) || check=0 ;;
    cat_two_pass_sync)  # the durable floors: extshuffle fsyncs its output
      measure bash -c 'cat "$1" > "$2" && cat "$2" > "$3" && sync' _ "$in_file" "$tmp_file" "$out_file"
      (( run == 1 )) || check=0 ;;
    cat_one_pass_sync)
      measure bash -c 'cat "$1" > "$2" && sync' _ "$in_file" "$out_file"
      (( run == 1 )) || check=0 ;;
    terashuf)  # MEMORY in GiB (fractions allowed), stdin to stdout; not synced, as shuf
      [ -x "${TERASHUF:-}" ] || return 0
      measure env MEMORY="$(awk -v b="$budget" 'BEGIN { printf "%.4f", b / 1073741824 }')" SEED="$run" TMPDIR="$DIR" \
        bash -c '"$1" < "$2" > "$3"' _ "$TERASHUF" "$in_file" "$out_file" ;;
    shuf)
      measure shuf "$in_file" -o "$out_file" ;;
    sort_r)
      measure sort -R -S "${budget}b" -T "$DIR" "$in_file" -o "$out_file" ;;
    stxxl)
      measure env OMP_NUM_THREADS="$threads" "$stxxl_shuffle" "$in_file" "$out_file" "$rs" "$budget" "$DIR" "$run" ;;
  esac
  if (( check )); then perm=$(check_permutation "$format" "$rs" "$out_file"); else perm=unchecked; fi
  rm -f "$out_file" "$tmp_file"
  record "$case" "$tool" "$format" "$rs" "$bytes" "$memory" "$budget" "$threads" "$run" "$perm"
}

# run_case CASE FORMAT RECORD_SIZE BYTES MEMORY TOOL[:slow]...
run_case() {
  local case=$1 format=$2 rs=$3 bytes=$4 memory=$5 r spec tool reps
  shift 5
  for ((r = 1; r <= REPEATS || r <= SLOW_REPEATS; r++)); do
    for spec in "$@"; do
      tool=${spec%:slow}
      if [ -n "${TOOLS:-}" ] && [[ " $TOOLS " != *" $tool "* ]]; then continue; fi
      if [ "$spec" != "$tool" ]; then reps=$SLOW_REPEATS; else reps=$REPEATS; fi
      (( r <= reps )) && run_tool "$case" "$tool" "$format" "$rs" "$bytes" "$memory" "$r"
    done
  done
}

# Cases with their own runners (dataset64, jsonl_heavy, tar_wds).
# shellcheck source=bench/suite_cases.sh
source bench/suite_cases.sh

# The slow peers run first in their round, so that the others' runs keep
# being interleaved with each other.
for c in $cases; do
  case_t0=$(date +%s)
  echo "suite.sh: case $c (estimated ~$(estimate_seconds "$c") s)" >&2
  case "$c" in
    fixed8_1g)
      make_input fixed 8 "$(mib 1024)"
      run_case "$c" fixed 8 "$(mib 1024)" default cat_two_pass cat_one_pass cat_one_pass_sync extshuffle stxxl ;;
    fixed8_8g)
      make_input fixed 8 "$(mib 8192)"
      run_case "$c" fixed 8 "$(mib 8192)" "$MEMORY" stxxl:slow cat_two_pass cat_two_pass_sync cat_one_pass extshuffle ;;
    text_1g)
      make_input lines 0 "$(mib 1024)"
      run_case "$c" lines 0 "$(mib 1024)" default sort_r:slow cat_two_pass cat_one_pass extshuffle shuf ;;
    text_4g)
      make_input lines 0 "$(mib 4096)"
      run_case "$c" lines 0 "$(mib 4096)" "$MEMORY" sort_r:slow cat_two_pass cat_two_pass_sync cat_one_pass extshuffle ;;
    fixed4k_4g)
      make_input fixed 4096 "$(mib 4096)"
      run_case "$c" fixed 4096 "$(mib 4096)" "$MEMORY" cat_two_pass cat_two_pass_sync cat_one_pass extshuffle stxxl ;;
    scaling)
      for s in $(scaling_sizes); do
        make_input fixed 8 "$s"
        REPEATS=$SCALING_REPEATS run_case "$c" fixed 8 "$s" "$MEMORY" cat_two_pass cat_one_pass extshuffle
      done ;;
    threads)
      make_input fixed 8 "$(mib 1024)"
      for ((r = 1; r <= REPEATS; r++)); do
        run_tool "$c" extshuffle fixed 8 "$(mib 1024)" "$MEMORY" "$r" 1
        run_tool "$c" extshuffle fixed 8 "$(mib 1024)" "$MEMORY" "$r" 2
      done ;;
    dataset64) run_dataset64 "$c" "$(mib "${DATASET64_MIB:-1024}")" ;;
    jsonl_heavy) run_jsonl_heavy "$c" "$(mib "${JSONL_HEAVY_MIB:-2048}")" ;;
    tar_wds) run_tar_wds "$c" "$(mib "${TAR_WDS_MIB:-2048}")" ;;
    in_ram_fixed8) run_in_ram_fixed8 "$c" "$(mib "${IN_RAM_MIB:-2048}")" ;;
    in_ram_fixed32) run_in_ram_fixed32 "$c" "$(mib "${IN_RAM_MIB:-2048}")" ;;
    in_ram_npy512) run_in_ram_npy512 "$c" "$(mib "${IN_RAM_NPY_MIB:-512}")" ;;
  esac
  rm -f "$DIR"/in.*
  case_seconds=$(( $(date +%s) - case_t0 ))
  echo "BENCH suite_case case=$c seconds=$case_seconds estimated_seconds=$(estimate_seconds "$c") repeats=$([ "$c" = scaling ] && echo "$SCALING_REPEATS" || echo "$REPEATS") slow_repeats=$SLOW_REPEATS quick=$quick" | tee -a "$OUT"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT"
echo "suite.sh: results in $OUT; tables and plots: /usr/bin/python3 bench/suite_report.py $OUT" >&2

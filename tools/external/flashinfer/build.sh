#!/usr/bin/env bash
# Builds libflashinfer-ssu-shim.so: FlashInfer's selective_state_update kernels compiled from its own
# headers (--src, a FlashInfer source tree with include/flashinfer/mamba/; never part of this
# repository) for sm_90a, one object per line of --configs, with the nvcc flags FlashInfer's JIT
# uses for its Hopper module, and this folder's C entry points (ssu_shim.h).
#   bash tools/external/flashinfer/build.sh --src DIR --out DIR [--configs FILE] [--jobs 1] [--commit SHA]
# --commit defaults to the first word of DIR/COMMIT. Objects are kept in DIR/obj and rebuilt only
# when their command line or a source changed. The ptxas resource usage of every kernel goes to
# OUT/resource-usage.txt, a summary to stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src="" out="" configs="$here/configs.txt" jobs=1 commit=""
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "build.sh: argument '$1' needs a value" >&2; exit 2; }
  case "$1" in
    --src) src=$2 ;;
    --out) out=$2 ;;
    --configs) configs=$2 ;;
    --jobs) jobs=$2 ;;
    --commit) commit=$2 ;;
    *) echo "build.sh: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
  shift 2
done
[ -f "$src/include/flashinfer/mamba/selective_state_update.cuh" ] || {
  echo "build.sh: argument '--src': '$src' has no include/flashinfer/mamba/selective_state_update.cuh" >&2; exit 2; }
[ -n "$out" ] || { echo "build.sh: argument '--out' is required" >&2; exit 2; }
[ -f "$configs" ] || { echo "build.sh: argument '--configs': '$configs' is not a file" >&2; exit 2; }
case "$jobs" in ''|*[!0-9]*|0) echo "build.sh: argument '--jobs': '$jobs' is not a positive whole number" >&2; exit 2 ;; esac
if [ -z "$commit" ]; then
  commit=$( (cat "$src/COMMIT" 2>/dev/null || echo unknown) | awk 'NR == 1 {print $1}')
fi
case "$commit" in *[!0-9a-zA-Z]*|'') echo "build.sh: argument '--commit': '$commit' is not a commit" >&2; exit 2 ;; esac
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$nvcc" ] || { echo "build.sh: no nvcc (set NVCC)" >&2; exit 2; }
src=$(cd "$src" && pwd)
mkdir -p "$out/obj" "$out/gen"
out=$(cd "$out" && pwd)

# FlashInfer's JIT flags for its sm_90 module (flashinfer/jit/core.py gen_jit_spec, cpp_ext.py
# build_cuda_cflags, jit/mamba/selective_state_update.py), then ours: its headers narrow int64_t
# strides into uint64_t lists (an error of nvcc 13's front end, a warning of gcc), and their
# template lambdas are C++20 in a C++17 build, as FlashInfer compiles them.
flashinfer_flags=(-std=c++17 -use_fast_math -Xfatbin=-compress-all -DFLASHINFER_ENABLE_F16 -DFLASHINFER_ENABLE_BF16
  -DFLASHINFER_ENABLE_FP8_E4M3 -DFLASHINFER_ENABLE_FP8_E5M2 -DNDEBUG -O3 --compiler-options=-fPIC
  --expt-relaxed-constexpr -static-global-template-stub=false -DFLASHINFER_ENABLE_FP8_E8M0 -DFLASHINFER_ENABLE_FP4_E2M1
  -gencode=arch=compute_90a,code=sm_90a)
our_flags=(-diag-warn 2361 -Xcompiler -Wno-narrowing -diag-suppress 3288,177,1143,20012 -I"$src/include" -I"$here")

ctype() { case "$1" in f32) echo float ;; f16) echo half ;; bf16) echo __nv_bfloat16 ;; esac; }  # as the jinja renders it
enum() { case "$1" in f32) echo SSU_F32 ;; f16) echo SSU_F16 ;; bf16) echo SSU_BF16 ;; esac; }

# Compiles object $3 from $2 with the flags after it, unless the same command built it from the
# same shim.cu and headers.
compile() {
  local log=$1 source=$2 object=$3; shift 3
  local command="$nvcc $* -c $source -o $object"
  if [ -f "$object" ] && [ "$(cat "$object.cmd" 2>/dev/null)" = "$command" ] &&
     [ -z "$(find "$here/shim.cu" "$here/ssu_internal.h" "$here/ssu_shim.h" -newer "$object" 2>/dev/null)" ]; then
    return 0
  fi
  rm -f "$object" "$object.cmd"
  if ! "$nvcc" "$@" -c "$source" -o "$object" >"$log" 2>&1; then
    echo "build.sh: compiling $object failed; the last lines of $log:" >&2
    tail -20 "$log" >&2
    return 1
  fi
  echo "$command" >"$object.cmd"
}

inc="$out/gen/configs.inc.new"
: >"$inc"
objects=() n=0 running=0 failed=0
while read -r kind state input weight A dim dstate ntokens rest; do
  case "$kind" in ''|\#*) continue ;; stp|mtp) ;; *) echo "build.sh: $configs: kind '$kind' is not stp or mtp" >&2; exit 2 ;; esac
  [ -z "$rest" ] || { echo "build.sh: $configs: extra words '$rest' on the $kind $dim $dstate line" >&2; exit 2; }
  if [ "$kind" = stp ]; then
    [ -z "$ntokens" ] || { echo "build.sh: $configs: an stp line takes no ntokens" >&2; exit 2; }
    ntokens=1 mtp=0
  else
    mtp=1
  fi
  for t in "$state" "$input" "$weight" "$A"; do
    case "$t" in f32|f16|bf16) ;; *) echo "build.sh: $configs: dtype '$t' is not f32, f16 or bf16" >&2; exit 2 ;; esac
  done
  for v in "$dim" "$dstate" "$ntokens"; do
    case "$v" in ''|*[!0-9]*) echo "build.sh: $configs: '$v' is not a size ($kind $dim $dstate $ntokens)" >&2; exit 2 ;; esac
  done
  # FlashInfer's Hopper module instantiates its horizontal single-token kernel with DIM/64*4
  # consumer warps, which does not compile below DIM 64: those get its pre-Hopper module.
  module=sm90 defines=(-DFLASHINFER_MAMBA_ENABLE_SM90)
  if [ "$kind" = stp ] && [ "$dim" -lt 64 ]; then module=sm80 defines=(); fi
  tag="${kind}_${state}_${input}_${weight}_${A}_i32_d${dim}_n${dstate}_t${ntokens}"
  entry="entry_$tag"
  echo "SSU_CONFIG($entry, \"$kind\", $(enum "$state"), $(enum "$input"), $(enum "$weight"), $(enum "$A"), SSU_I32, $dim, $dstate, $ntokens, \"$module\")" >>"$inc"
  config_flags=("${defines[@]}" -DSSU_STATE_T="$(ctype "$state")" -DSSU_INPUT_T="$(ctype "$input")"
    -DSSU_WEIGHT_T="$(ctype "$weight")" -DSSU_MATRIXA_T="$(ctype "$A")" -DSSU_INDEX_T=int32_t -DSSU_DIM="$dim"
    -DSSU_DSTATE="$dstate" -DSSU_NTOKENS="$ntokens" -DSSU_MTP="$mtp" -DSSU_NAMESPACE="ssu_flashinfer_$tag"
    -DSSU_ENTRY="$entry" --resource-usage)
  object="$out/obj/$tag.o"
  objects+=("$object")
  n=$((n + 1))
  compile "$out/obj/$tag.log" "$here/shim.cu" "$object" "${flashinfer_flags[@]}" "${our_flags[@]}" "${config_flags[@]}" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || failed=1; running=$((running - 1)); fi
done <"$configs"
while [ "$running" -gt 0 ]; do wait -n || failed=1; running=$((running - 1)); done
[ "$failed" = 0 ] || { echo "build.sh: a configuration did not compile" >&2; exit 1; }
[ "$n" -gt 0 ] || { echo "build.sh: $configs lists no configuration" >&2; exit 2; }
mv "$inc" "$out/gen/configs.inc"

host_flags=(-std=c++17 -O2 --compiler-options=-fPIC -I"$here" -I"$out/gen")
for part in checks api cuda_driver; do  # host code, seconds: always rebuilt (api.cpp reads configs.inc)
  "$nvcc" "${host_flags[@]}" -DSSU_SOURCE_COMMIT="\"$commit\"" -c "$here/$part.cpp" -o "$out/obj/$part.o"
  objects+=("$out/obj/$part.o")
done

# The CUDA runtime is linked statically (nvcc's default) and libcuda not at all (cuda_driver.cpp).
"$nvcc" -shared -gencode=arch=compute_90a,code=sm_90a -o "$out/libflashinfer-ssu-shim.so" "${objects[@]}" \
  -Xlinker --no-undefined -Xlinker --exclude-libs,ALL

# ptxas' report per kernel: "<registers> registers, <bytes> spill stores, <name>".
for object in "${objects[@]}"; do
  log="${object%.o}.log"
  [ -f "$log" ] || continue  # host code
  awk '/Compiling entry function/ {name = $7; spill = 0}
       /bytes spill stores/ {spill = $5}
       /Used [0-9]+ registers/ {print $5, "registers,", spill + 0, "bytes spill stores,", name}' "$log"
done | sort -k1,1n >"$out/resource-usage.txt"
kernels=$(wc -l <"$out/resource-usage.txt")
echo "build.sh: $out/libflashinfer-ssu-shim.so ($(du -h "$out/libflashinfer-ssu-shim.so" | cut -f1)), $n configurations of flashinfer-ai/flashinfer $commit"
if [ "$kernels" -gt 0 ]; then
  echo "build.sh: $kernels kernels; registers $(head -1 "$out/resource-usage.txt" | cut -d' ' -f1) to $(tail -1 "$out/resource-usage.txt" | cut -d' ' -f1); kernels spilling: $(awk '$3 > 0' "$out/resource-usage.txt" | wc -l) (ptxas, $out/resource-usage.txt)"
fi

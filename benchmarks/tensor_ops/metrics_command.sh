#!/usr/bin/env bash
# Does the ncu command that `rooflint metrics ncu --arch hopper` prints run on a Hopper GPU,
# and does ncu refuse the fp16 names the Ampere list uses? Also captures one cuBLAS bf16 GEMM
# the ways users do: the printed command (raw page, --log-file), a report re-exported with
# --import, and plain `ncu --csv > file` details pages (default set and --set full).
#   bash benchmarks/tensor_ops/metrics_command.sh OUTDIR     (needs a GPU, PyTorch and ncu)
set -u
out=${1:?usage: metrics_command.sh OUTDIR}
here=$(dirname "$0")
app=(python3 "$here/check.py" --gemm bf16 4096 4096 4096)
hopper=$(python3 - "$here/../../src/rooflint/cli/commands/metrics.py" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("metrics", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
print(",".join(m._BASE + m._TENSOR["hopper"] + m._PEAKS))
PY
)
step() { echo "== $1"; shift; timeout 150 "$@"; echo "== exit $?"; }
step "printed command" env LC_ALL=C ncu --profile-from-start off --metrics "$hopper" \
    --csv --page raw --print-units base --log-file "$out/printed-raw.csv" "${app[@]}"
step "ampere fp16 names on hopper" ncu --profile-from-start off --csv --page raw \
    --metrics sm__ops_path_tensor_src_fp16_dst_fp16.sum,sm__ops_path_tensor_src_fp16_dst_fp32.sum \
    "${app[@]}"
step "report" ncu --profile-from-start off --metrics "$hopper" -o "$out/gemm-bf16" "${app[@]}"
step "import" sh -c "LC_ALL=C ncu --import '$out/gemm-bf16.ncu-rep' --csv --page raw \
    --print-units base > '$out/imported-raw.csv'"
step "details, default set" sh -c "ncu --profile-from-start off --csv ${app[*]} \
    > '$out/details-default-stdout.csv'"
step "details, full set" sh -c "ncu --profile-from-start off --set full --csv ${app[*]} \
    > '$out/details-full-stdout.csv'"
ls -la "$out"

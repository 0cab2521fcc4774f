#!/bin/sh
# The layer rule (DESIGN §1): includes point only down the stack
#   platform → core → ops → proto → kernels / device → eager → graph → saved_model → keras, data, distribute,
#   profiler, summary, numpy → serving → capi
#   data, distribute → data_service
# (saved_model sits under keras as in TensorFlow, where Keras saves through tf.train.Checkpoint and
# tf.saved_model; serving hosts SavedModels and Keras models; data_service, the tf.data service, rebuilds
# pipelines (data), runs their graph functions (graph) and speaks the RPC transport of distribute, so it sits
# on both)
# A folder of src/ may include its own headers, the public headers (tfc/...), and the internal headers of the
# folders listed for it below. The top-level modules reach each other only through the public headers.
# Known exceptions, each with its reason, are listed in tools/layer_exceptions.txt as "file -> included"; an
# exception that no longer occurs must be removed. Run from the repository root (make check-layers, part of
# make test).
set -e
cd "$(dirname "$0")/.."
exceptions=tools/layer_exceptions.txt

below() {
  case "$1" in
    platform) echo "" ;;
    core) echo "platform" ;;
    ops) echo "core platform" ;;
    proto) echo "ops core platform" ;;
    kernels | device) echo "device ops proto core platform" ;;
    eager) echo "kernels device proto ops core platform" ;;
    graph) echo "eager kernels device proto ops core platform" ;;
    keras | data | distribute | saved_model | serving | profiler | summary | numpy)
      echo "graph eager kernels device proto ops core platform" ;;
    data_service) echo "data distribute graph eager kernels device proto ops core platform" ;;
    capi) echo "data_service keras data distribute saved_model serving profiler summary numpy graph eager kernels device proto ops core platform" ;;
    *) echo "?" ;;
  esac
}

bad=0
found=$(mktemp)
trap 'rm -f "$found"' EXIT
for dir in src/*/; do
  layer=$(basename "$dir")
  allowed=$(below "$layer")
  if [ "$allowed" = "?" ]; then
    echo "check_layers: src/$layer is not in the layer list of tools/check_layers.sh (add it where it belongs)"
    bad=1
    continue
  fi
  grep -rnoE --include='*.c' --include='*.h' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/[^"]*"' "$dir" |
    while IFS= read -r hit; do
      file=${hit%%:*}
      inc=$(printf '%s\n' "$hit" | sed -E 's/.*"([^"]*)".*/\1/')
      top=${inc%%/*}
      [ "$top" = "$layer" ] || [ "$top" = "tfc" ] && continue
      case " $allowed " in *" $top "*) continue ;; esac
      echo "$file -> $inc"
    done >>"$found"
done
while IFS= read -r v; do
  if ! grep -qxF "$v" "$exceptions" 2>/dev/null; then
    echo "check_layers: $v points up the layer stack (DESIGN §1); use the lower layer's API or move the code"
    bad=1
  fi
done <"$found"
grep -vE '^(#|$)' "$exceptions" 2>/dev/null | while IFS= read -r e; do
  grep -qxF "$e" "$found" || { echo "check_layers: exception '$e' no longer occurs: remove it from $exceptions"; exit 1; }
done || bad=1
[ "$bad" = 0 ] && echo "check_layers: every include of src/ points down the layer stack ($(wc -l <"$found") known exceptions)"
exit $bad

# Mesa's Vulkan device-select layer, which ties a process's next Vulkan instance to one GPU
# (DRI_PRIME=pci-DDDD_BB_DD_F with MESA_VK_DEVICE_SELECT_FORCE_DEFAULT_DEVICE=1): how
# @gpuhash/core's requestGpus and @gpuhash/sharded's ShardWorkers open each of several identical
# GPUs, which Dawn alone cannot tell apart. The Vulkan loader finds the layer only through a
# manifest in a system implicit_layer.d (the bundled loader ignores VK_ADD_IMPLICIT_LAYER_PATH).
#
#   bash tools/gpu-check/device-select.sh pack .gpu-bundle   (here, by pack-all.sh) copies the
#       layer of this machine's mesa-vulkan-drivers and the libraries it links into the bundle.
#   . tools/gpu-check/device-select.sh                        (on the GPU host, B=.gpu-bundle)
#       uses an installed layer if there is one; otherwise installs the bundle's copy: a manifest
#       in /etc/vulkan/implicit_layer.d (or ~/.local/share/vulkan/implicit_layer.d without root),
#       and LD_LIBRARY_PATH for the libraries the host lacks. Says so either way; without a
#       layer, perf-sharded says so too and runs on one GPU.
LAYER_SO=libVkLayer_MESA_device_select.so
LAYER_JSON=VkLayer_MESA_device_select.json

if [ "${1:-}" = pack ]; then
  out=${2:?usage: device-select.sh pack BUNDLE_DIR}/device-select
  so=$(ldconfig -p 2>/dev/null | awk -v n="$LAYER_SO" '$1 == n { print $NF; exit }')
  [ -n "$so" ] || so=$(ls /usr/lib/x86_64-linux-gnu/$LAYER_SO 2>/dev/null | head -1)
  if [ -z "$so" ]; then
    echo "device-select.sh: $LAYER_SO is not installed here (apt-get install mesa-vulkan-drivers); the bundle carries no layer" >&2
    exit 0
  fi
  rm -rf "$out"; mkdir -p "$out/lib"
  cp -L "$so" "$out/lib/"
  # The libraries it links, but the C library's own.
  ldd "$so" | awk '$3 ~ /^\// { print $3 }' | grep -v -E '/(libc|libpthread|libdl|libm|librt|ld-linux[^/]*)\.so' | while read -r lib; do cp -L "$lib" "$out/lib/"; done
  echo "device-select layer: $(ls "$out/lib" | wc -l) files in $out"
  exit 0
fi

_gpuhash_device_select() {
  local dir f found=""
  for dir in "${XDG_CONFIG_HOME:-$HOME/.config}" ${XDG_CONFIG_DIRS//:/ } /etc/xdg /etc "${XDG_DATA_HOME:-$HOME/.local/share}" ${XDG_DATA_DIRS//:/ } /usr/local/share /usr/share; do
    for f in "$dir"/vulkan/implicit_layer.d/*.json; do
      [ -f "$f" ] && grep -q VK_LAYER_MESA_device_select "$f" && { found=$f; break 2; }
    done
  done
  local b=${B:-.gpu-bundle}
  local lib
  lib=$(cd "$b/device-select/lib" 2>/dev/null && pwd)
  if [ -n "$found" ]; then
    echo "device-select layer: $found"
    # An installed manifest that names the bundle's copy needs its libraries too.
    grep -q "$b/device-select\|${lib:-/nonexistent}" "$found" 2>/dev/null || return 0
  elif [ -z "$lib" ] || [ ! -f "$lib/$LAYER_SO" ]; then
    echo "device-select layer: NOT INSTALLED and not in $b (install mesa-vulkan-drivers, or pack it here: bash tools/gpu-check/device-select.sh pack $b); one GPU only"
    return 0
  else
    # GPUHASH_LAYER_DIR: where to put the manifest instead (a user-writable implicit_layer.d).
    local target=${GPUHASH_LAYER_DIR:-/etc/vulkan/implicit_layer.d}
    mkdir -p "$target" 2>/dev/null && [ -w "$target" ] || target=${XDG_DATA_HOME:-$HOME/.local/share}/vulkan/implicit_layer.d
    mkdir -p "$target"
    cat > "$target/$LAYER_JSON" <<JSON
{
  "file_format_version": "1.0.0",
  "layer": {
    "name": "VK_LAYER_MESA_device_select",
    "type": "GLOBAL",
    "library_path": "$lib/$LAYER_SO",
    "api_version": "1.3.211",
    "implementation_version": "1",
    "description": "Linux device selection layer",
    "functions": { "vkNegotiateLoaderLayerInterfaceVersion": "vkNegotiateLoaderLayerInterfaceVersion" },
    "disable_environment": { "NODEVICE_SELECT": "1" }
  }
}
JSON
    echo "device-select layer: installed $target/$LAYER_JSON -> $lib/$LAYER_SO"
  fi
  # Only the libraries the host lacks come from the bundle.
  local missing="$lib/../missing"
  rm -rf "$missing"; mkdir -p "$missing"
  for f in "$lib"/*.so*; do
    local name
    name=$(basename "$f")
    [ "$name" = "$LAYER_SO" ] && continue
    ldconfig -p 2>/dev/null | grep -q " $name " || ldconfig -p 2>/dev/null | grep -q "^[[:space:]]*$name " || ln -sf "$f" "$missing/$name"
  done
  if [ -n "$(ls "$missing")" ]; then
    export LD_LIBRARY_PATH="$(cd "$missing" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "device-select layer: the host lacks $(ls "$missing" | tr '\n' ' ')(LD_LIBRARY_PATH set)"
  fi
}
_gpuhash_device_select
unset -f _gpuhash_device_select

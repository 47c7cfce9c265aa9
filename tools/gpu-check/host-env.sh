# Sourced by gpu-host.sh and ab.sh on the GPU host (B: the bundle folder). run.sh unpacks node and
# Dawn on its first run (a --help run does it when nothing ran yet); the other entries run node
# directly, so point the Vulkan loader at the NVIDIA driver here.
[ -x "$B/node" ] || bash "$B/run.sh" --help > /dev/null 2>&1 || true
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; fi
done
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
# The GPU host's copy of the tree is not a git checkout of the packed revision: benches record the
# revision pack-all.sh wrote instead of what `git rev-parse` says there.
if [ -f "$B/REVISION" ]; then export GPUHASH_GIT_REVISION=$(cat "$B/REVISION"); fi

#!/usr/bin/env bash
# The part of mamba_ssm that time_mamba_ssm.py imports, taken from a git clone of state-spaces/mamba
# into a folder for a GPU host without network (fast_session.sh table reads it as SSD_MAMBA_DIR): its
# Triton SSD kernels and their helpers, with an empty mamba_ssm/__init__.py, so that importing them
# does not load the package's CUDA extensions (not built there).
#   tools/bench/mamba_subset.sh MAMBA_CLONE DEST [REV]     (REV default HEAD; the tables used e9594ce)
# DEST must not exist; it is written beside its name and renamed at the end, so a failed run leaves
# none. Keep it out of commits (a git-ignored folder such as upstream/ or bundle-*/).
set -euo pipefail
fail() { echo "mamba_subset.sh: $*" >&2; exit 2; }
if [ $# -lt 2 ] || [ $# -gt 3 ]; then fail "usage: mamba_subset.sh MAMBA_CLONE DEST [REV]"; fi
clone=$1 dest=${2%/} rev=${3:-HEAD}
git -C "$clone" rev-parse --git-dir >/dev/null 2>&1 || fail "argument 'MAMBA_CLONE': $clone is not a git clone"
[ -z "$(git -C "$clone" rev-parse --show-prefix)" ] ||
  fail "argument 'MAMBA_CLONE': $clone is a folder inside a clone, not its top"
[ -n "$dest" ] || fail "argument 'DEST': empty"
git -C "$clone" rev-parse --verify -q "$rev^{commit}" >/dev/null || fail "argument 'REV': '$rev' is not a commit of $clone"
[ ! -e "$dest" ] || fail "argument 'DEST': $dest exists (nothing is overwritten)"
[ ! -e "$dest.part" ] || fail "argument 'DEST': $dest.part exists (a run's leftover? nothing is overwritten)"
[ -d "$(dirname "$dest")" ] || fail "argument 'DEST': no folder $(dirname "$dest")"
# time_mamba_ssm.py's imports: the SSD kernels, the decode step, and the modules they import.
wanted='^mamba_ssm/(ops/__init__|ops/triton/(__init__|ssd_[a-z_]+|selective_state_update|softplus|layernorm_gated|k_activations)|utils/(__init__|determinism|torch))\.py$'
mapfile -t files < <(git -C "$clone" ls-tree -r --name-only "$rev" mamba_ssm | grep -E "$wanted")
for needed in ops/triton/ssd_combined.py ops/triton/selective_state_update.py utils/determinism.py; do
  printf '%s\n' "${files[@]}" | grep -qx "mamba_ssm/$needed" || fail "argument 'REV': $rev has no mamba_ssm/$needed"
done
mkdir "$dest.part"
trap 'rm -rf "$dest.part"' EXIT
git -C "$clone" archive "$rev" -- "${files[@]}" | tar x -C "$dest.part"
: >"$dest.part/mamba_ssm/__init__.py"
mv -T "$dest.part" "$dest"
echo "$dest: mamba_ssm at $(git -C "$clone" rev-parse --short "$rev"), ${#files[@]} files"

#!/usr/bin/env bash
# What the comparison's C programs (crates/bench/c/) need beside Rust: Open MPI's compiler
# and launcher (mpicc.openmpi, mpirun.openmpi) for the MPI peer, and a C compiler (cc) for
# the C floor. Open MPI is named explicitly: MPICH may own the plain mpicc/mpirun names.
#
#   scripts/install-bench-deps.sh           install what is missing (as root, with apt-get:
#                                           one `apt-get update`, then `apt-get install -y`),
#                                           or, without root or apt-get, say what to install
#   scripts/install-bench-deps.sh --check   only say what is missing
#
# Exits 0 when everything is there (afterwards), 1 when something is still missing.
set -euo pipefail

check_only=0
case ${1:-} in
  --check) check_only=1 ;;
  "") ;;
  -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "install-bench-deps.sh: unknown option $1 (use --check or --help)" >&2; exit 2 ;;
esac

# The Debian packages still needed, from the commands that are missing.
missing() {
  local pkgs=()
  if ! command -v mpicc.openmpi >/dev/null 2>&1 || ! command -v mpirun.openmpi >/dev/null 2>&1; then
    pkgs+=(openmpi-bin libopenmpi-dev)
  fi
  command -v cc >/dev/null 2>&1 || pkgs+=(gcc)
  echo "${pkgs[@]}"
}

read -r -a need <<<"$(missing)"
if ((${#need[@]} == 0)); then
  exit 0
fi
if ((check_only)) || ((EUID != 0)) || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-bench-deps.sh: missing Debian packages: ${need[*]}" >&2
  echo "  install them with: sudo apt-get install -y ${need[*]}" >&2
  echo "  (or your distribution's Open MPI with mpicc.openmpi/mpirun.openmpi, and a C compiler)" >&2
  exit 1
fi
# Which MPI owns the plain names (mpicc, mpirun) now: installing Open MPI would take them
# over from an MPI already installed (e.g. MPICH), and the comparison does not need them.
alternative() { update-alternatives --query "$1" 2>/dev/null | sed -n 's/^Value: //p'; }
had_mpicc=$(alternative mpi || true)
had_mpirun=$(alternative mpirun || true)
echo "install-bench-deps.sh: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${need[@]}" >/dev/null
for pair in "mpi:$had_mpicc" "mpirun:$had_mpirun"; do
  name=${pair%%:*} was=${pair#*:}
  if [[ -n $was && $(alternative "$name") != "$was" ]]; then
    update-alternatives --set "$name" "$was" >/dev/null
    echo "install-bench-deps.sh: kept $was as the default (alternative $name)" >&2
  fi
done
read -r -a still <<<"$(missing)"
if ((${#still[@]} > 0)); then
  echo "install-bench-deps.sh: still missing after apt-get: ${still[*]}" >&2
  exit 1
fi
echo "install-bench-deps.sh: done" >&2

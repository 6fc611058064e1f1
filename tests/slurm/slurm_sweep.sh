#!/usr/bin/env bash
# A real SLURM in the tests: starts a one-node cluster on localhost (munged, slurmctld, slurmd of
# Debian's slurm-wlm, with their own config, keys and state in a temporary folder, on free ports),
# submits `fleetsim sweep --slurm-array` as a real job array, waits for it, cancels one task of a
# second array to check that --collect reports the missing run and a new array resumes only it, then
# compares --collect's runs.csv, aggregate.csv and paired.csv with the local backend's byte for byte,
# and stops everything. Exit 77 (skipped, with the reason) where the packages or root are missing.
# Usage: tests/slurm/slurm_sweep.sh FLEETSIM_BINARY
set -euo pipefail
FLEETSIM="$(realpath "${1:?usage: slurm_sweep.sh FLEETSIM_BINARY}")"
skip() { echo "SKIPPED: $*"; exit 77; }
for p in munged slurmctld slurmd sbatch squeue sinfo scancel scontrol; do
  command -v "$p" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin"
  command -v "$p" >/dev/null 2>&1 ||
    skip "no $p: apt-get install slurmctld slurmd slurm-client munge (scripts/setup.sh --test)"
done
[ "$(id -u)" -eq 0 ] || skip "slurmd runs jobs as their user only when started as root; run as root"

T="$(mktemp -d /tmp/fleetsim-slurm.XXXXXX)"
chmod 700 "$T"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
fail() {
  echo "FAILED: $*" >&2
  for f in slurmctld.log slurmd.log munged.log; do echo "--- $f" >&2; tail -20 "$T/$f" >&2 || true; done
  KEEP=1
  exit 1
}

# munge: a key and a socket of our own.
head -c 1024 /dev/urandom > "$T/munge.key"
chmod 400 "$T/munge.key"
mkdir -m 700 "$T/munge"
munged --force --key-file="$T/munge.key" --socket="$T/munge/munge.sock" --pid-file="$T/munge/munged.pid" \
  --log-file="$T/munged.log" --seed-file="$T/munge/seed" --foreground > "$T/munged.out" 2>&1 &
PIDS+=($!)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
NODE="$(hostname -s)"
CPUS="$(nproc)"
mkdir -p "$T/state" "$T/spool"
cat > "$T/slurm.conf" <<CONF
ClusterName=fleetsimtest
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=test Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$T/slurm.conf"
for i in $(seq 50); do [ -S "$T/munge/munge.sock" ] && break; sleep 0.1; done
[ -S "$T/munge/munge.sock" ] || fail "munged did not start"
slurmctld -D -i -f "$SLURM_CONF" > "$T/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -N "$NODE" -f "$SLURM_CONF" > "$T/slurmd.out" 2>&1 &
PIDS+=($!)
for i in $(seq 100); do
  state="$(sinfo -h -n "$NODE" -o %T 2>/dev/null || true)"
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || fail "the node did not come up (state '$state')"
echo "slurm: one-node cluster up ($NODE, $CPUS CPUs) in $SECONDS s"

# wait_job JOBID: until no task of the job is pending or running (at most 40 s).
wait_job() {
  for i in $(seq 200); do
    [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  fail "job $1 still queued after 40 s: $(squeue -j "$1")"
}

# The sweep: the tiny queueing case of tests/tiny_queue_case.hpp (one node, three jobs), 2 policies x 3 seeds.
W="$T/sweep"
mkdir -p "$W"
printf 'seed = 3\n[cluster]\n[[cluster.pool]]\nname = "p"\nnodes = 1\ngpus_per_node = 4\ngpu = "V100"\n[workload]\nformat = "csv"\npath = "trace.csv"\n[workload.columns]\nid = "id"\nsubmit = "submit"\nduration = "duration"\ngpus = "gpus"\n' > "$W/s.toml"
printf 'id,submit,duration,gpus\nA,0,100,2\nB,10,50,4\nC,20,30,1\n' > "$W/trace.csv"
printf 'base = "s.toml"\nseeds = 3\n[grid]\n"scheduler.policy" = ["fifo", "fifo-skip"]\n' > "$W/sweep.toml"
cd "$W"
"$FLEETSIM" sweep sweep.toml --out local --jobs 2 -q || fail "local backend"

# 1. The whole array, then --collect: byte for byte the local backend's.
"$FLEETSIM" sweep sweep.toml --out array --slurm-array -q > /dev/null || fail "--slurm-array"
jid="$(sbatch --parsable array/slurm/sweep.sbatch)" || fail "sbatch"
wait_job "$jid"
"$FLEETSIM" sweep sweep.toml --out array --collect -q || fail "--collect (see array/slurm/*.out)"
for f in runs.csv aggregate.csv paired.csv; do cmp "local/$f" "array/$f" || fail "$f differs from the local backend's"; done
echo "slurm: array job $jid: 6 tasks, --collect identical to the local backend"

# 2. A task cancelled by the scheduler: --collect names the missing run, a new array runs only it.
"$FLEETSIM" sweep sweep.toml --out killed --slurm-array -q > /dev/null || fail "--slurm-array"
jid="$(sbatch --parsable --hold killed/slurm/sweep.sbatch)" || fail "sbatch --hold"
scancel "${jid}_4"
scontrol release "$jid"
wait_job "$jid"
rc=0
out="$("$FLEETSIM" sweep sweep.toml --out killed --collect -q 2>&1)" || rc=$?
[ "$rc" = 1 ] || fail "--collect with a missing run: exit $rc, expected 1: $out"
grep -q "1 of 6 runs missing" <<<"$out" || fail "--collect does not report the missing run: $out"
grep -q "c001-s2" <<<"$out" || fail "--collect does not name the missing run c001-s2: $out"
script="$("$FLEETSIM" sweep sweep.toml --out killed --slurm-array -q)" || fail "--slurm-array (resume)"
grep -q '^#SBATCH --array=0-0$' <<<"$script" || fail "the resumed array is not one task: $script"
grep -q '^#   0 c001-s2$' <<<"$script" || fail "the resumed array does not run c001-s2: $script"
jid="$(sbatch --parsable killed/slurm/sweep.sbatch)" || fail "sbatch (resume)"
wait_job "$jid"
"$FLEETSIM" sweep sweep.toml --out killed --collect -q || fail "--collect after the resumed array"
for f in runs.csv aggregate.csv paired.csv; do cmp "local/$f" "killed/$f" || fail "resumed $f differs"; done
echo "slurm: task 4 cancelled: --collect named c001-s2, the resumed array ran only it; identical results"
echo "slurm: passed in $SECONDS s"

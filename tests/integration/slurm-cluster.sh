#!/bin/sh
# A single-node Slurm cluster in a folder, for the sweep suite's Slurm case:
#   slurm-cluster.sh start DIR [PID]
#                                writes DIR/slurm.conf and a munge key, starts munged,
#                                slurmctld and slurmd (state, spool, logs, sockets and pid
#                                files all in DIR), waits until the node is idle; prints
#                                the slurm.conf path. With PID (the test's process), a
#                                watcher stops the daemons once PID is gone, so a test
#                                killed midway (a timeout) leaves no cluster behind
#   slurm-cluster.sh stop DIR    stops the daemons by the process ids in DIR/*.pid
# Needs root (the daemons run as root), munge and slurm-wlm (slurmctld, slurmd, sinfo).
# The ports are picked from this shell's process id, so that two clusters on one
# machine do not meet. ProctrackType=proctrack/linuxproc and TaskPlugin=task/none
# keep cgroups out; JobCompType=jobcomp/filetxt logs every finished job to
# DIR/jobcomp.log, since accounting is off.
set -eu
cmd=$1
dir=$(cd "$2" && pwd)

stop() {
  for d in slurmd slurmctld munged; do
    if [ -s "$dir/$d.pid" ]; then
      pid=$(cat "$dir/$d.pid")
      kill "$pid" 2>/dev/null || true
      i=0
      while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$dir/$d.pid"
    fi
  done
}

if [ "$cmd" = stop ]; then
  stop
  exit 0
fi

mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$dir/munge/munge.key"
munged --force --socket="$dir/munge/munge.sock" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed"
port=$((20000 + ($$ % 20000)))
cpus=$(nproc)
cat > "$dir/slurm.conf" <<CONF
ClusterName=whsim-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.log
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
MaxArraySize=10001
NodeName=whsim-node NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=whsim Nodes=whsim-node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$dir/slurm.conf" -i
slurmd -f "$dir/slurm.conf" -N whsim-node
i=0
until sinfo -h -o %t 2>/dev/null | grep -q idle; do
  i=$((i + 1))
  if [ $i -gt 150 ]; then
    echo "slurm-cluster.sh: the node did not become idle in 15 s; see $dir/*.log" >&2
    stop
    exit 1
  fi
  sleep 0.1
done
if [ $# -ge 3 ]; then
  watch=$3
  (while kill -0 "$watch" 2>/dev/null && [ -s "$dir/slurmctld.pid" ]; do sleep 1; done
   stop) </dev/null >/dev/null 2>&1 &
fi
echo "$dir/slurm.conf"

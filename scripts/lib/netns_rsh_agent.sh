#!/usr/bin/env bash
# Open MPI's rsh launcher agent for hosts that are Linux network namespaces on this machine
# (`mpirun --mca plm_rsh_agent THIS`; scripts/lib/netns.sh): mpirun calls it as `agent HOST
# COMMAND...` to start its daemon on HOST. The command runs inside namespace HOST, in a UTS
# namespace of its own whose host name is HOST, so each "host" also has its own name, as a real
# one would (MPI_Get_processor_name, the messages naming the host of a rank).
set -euo pipefail
host=$1
shift
exec ip netns exec "$host" unshare --uts /bin/sh -c "hostname $host && exec $*"

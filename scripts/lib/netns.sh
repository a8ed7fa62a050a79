# Two "hosts" on one machine for tests of ranks talking over TCP (sourced by tests/mpi/netns_*.sh;
# needs root): two Linux network namespaces joined by a veth pair, and mpirun launching one rank
# in each through scripts/lib/netns_rsh_agent.sh, with Open MPI's TCP transport pinned to the
# veth link (no shared memory between the ranks, as between real hosts).
#
#   make_netns_hosts WORK [DELAY_MS]
#                           creates them (fails, never skips, when the kernel or the user cannot);
#                           with DELAY_MS, joined instead by TAP devices and tools/netns/
#                           delay_link.py, which delays every frame (for kernels without netem)
#   netns_mpirun ARGS...    mpirun, started inside the first host, one rank per host
#   in_host0 CMD...         runs CMD inside the first host (where rank 0 and its HTTP port live)
#   link_down / link_up     takes the veth pair down / up; link_blackhole drops every packet
#   remove_netns_hosts      kills what still runs inside them and deletes them (an EXIT trap)

NETNS_HOSTS=()
NETNS_LINKS=()

make_netns_hosts() {
  local work=$1 delay_ms=${2:-}
  # Unique per run: several engineers' tests may run on one machine at once.
  local tag=mx$$
  NETNS_HOSTS=("${tag}h0" "${tag}h1")
  NETNS_LINKS=("${tag}v0" "${tag}v1")
  NETNS_ADDRS=(10.77.0.1 10.77.0.2)
  local i
  for i in 0 1; do
    ip netns add "${NETNS_HOSTS[$i]}" ||
      fail "cannot create network namespace ${NETNS_HOSTS[$i]} (root and a kernel with netns needed)"
  done
  if [[ -z $delay_ms ]]; then
    ip link add "${NETNS_LINKS[0]}" netns "${NETNS_HOSTS[0]}" type veth \
      peer name "${NETNS_LINKS[1]}" netns "${NETNS_HOSTS[1]}" ||
      fail "cannot create the veth pair ${NETNS_LINKS[0]}/${NETNS_LINKS[1]}"
  else
    for i in 0 1; do
      ip -n "${NETNS_HOSTS[$i]}" tuntap add dev "${NETNS_LINKS[$i]}" mode tap ||
        fail "cannot create TAP device ${NETNS_LINKS[$i]}"
    done
    python3 "$ROOT/tools/netns/delay_link.py" "${NETNS_HOSTS[0]}" "${NETNS_LINKS[0]}" \
      "${NETNS_HOSTS[1]}" "${NETNS_LINKS[1]}" "$delay_ms" &
    NETNS_FORWARDER=$!
  fi
  for i in 0 1; do
    ip -n "${NETNS_HOSTS[$i]}" addr add "${NETNS_ADDRS[$i]}/24" dev "${NETNS_LINKS[$i]}"
    ip -n "${NETNS_HOSTS[$i]}" link set lo up
    # Jumbo frames, as on a cluster's network (and fewer frames for the forwarder to copy).
    ip -n "${NETNS_HOSTS[$i]}" link set "${NETNS_LINKS[$i]}" mtu 9000 up
  done
  NETNS_HOSTFILE=$work/hosts
  printf '%s slots=1\n' "${NETNS_HOSTS[@]}" >"$NETNS_HOSTFILE"
}

netns_mpirun() {
  # By subnet: the two ends' interface names differ, and Open MPI ignores a list naming one
  # that the host lacks.
  ip netns exec "${NETNS_HOSTS[0]}" mpirun --allow-run-as-root --bind-to none \
    --hostfile "$NETNS_HOSTFILE" --map-by node -n 2 \
    --mca plm_rsh_agent "$ROOT/scripts/lib/netns_rsh_agent.sh" \
    --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 "$@"
}

in_host0() { ip netns exec "${NETNS_HOSTS[0]}" "$@"; }

link_down() { ip -n "${NETNS_HOSTS[1]}" link set "${NETNS_LINKS[1]}" down; }
link_up() { ip -n "${NETNS_HOSTS[1]}" link set "${NETNS_LINKS[1]}" up; }

# Every packet between the hosts lost, the link itself up (no error reaches a socket): netem's
# `loss 100%` where the kernel has sch_netem, otherwise a blackhole route to the peer on both
# sides (the kernels of some VMs have no netem). Prints which.
link_blackhole() {
  if ip netns exec "${NETNS_HOSTS[1]}" tc qdisc add dev "${NETNS_LINKS[1]}" root netem loss 100% \
    2>/dev/null && ip netns exec "${NETNS_HOSTS[0]}" tc qdisc add dev "${NETNS_LINKS[0]}" root \
    netem loss 100% 2>/dev/null; then
    echo "every packet dropped: tc netem loss 100%"
  else
    ip -n "${NETNS_HOSTS[0]}" route add blackhole "${NETNS_ADDRS[1]}/32"
    ip -n "${NETNS_HOSTS[1]}" route add blackhole "${NETNS_ADDRS[0]}/32"
    echo "every packet dropped: blackhole routes (this kernel has no sch_netem)"
  fi
}

remove_netns_hosts() {
  local ns pid
  if [[ -n ${NETNS_FORWARDER:-} ]]; then
    kill "$NETNS_FORWARDER" 2>/dev/null || true
    NETNS_FORWARDER=
  fi
  for ns in "${NETNS_HOSTS[@]}"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  NETNS_HOSTS=()
}

# netns_rank_pid R: the pid of MPI rank R (Open MPI puts the rank in each process's environment).
netns_rank_pid() {
  local ns pid env
  for ns in "${NETNS_HOSTS[@]}"; do
    for pid in $(ip netns pids "$ns"); do
      # Read whole first: `tr | grep -q` under pipefail fails when grep's early exit cuts tr off.
      env=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null) || continue
      if grep -qx "OMPI_COMM_WORLD_RANK=$1" <<<"$env"; then
        echo "$pid"
        return 0
      fi
    done
  done
  return 1
}

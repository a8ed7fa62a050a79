#include "cli/parallel_flags.h"

#include "parallel/mpi_world.h"

namespace minimax::cli {

void add_parallel_flags(CLI::App* cmd, ParallelRequest& request) {
  cmd->add_option("--tensor-parallel-size", request.tensor_parallel,
                  "Ranks that split attention heads (and experts' width, or whole experts with "
                  "--enable-expert-parallel); run under mpirun -n T×D")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--data-parallel-size", request.data_parallel,
                  "Ranks that each run their own requests' attention (DP_EP; needs "
                  "--enable-expert-parallel)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--enable-expert-parallel", request.expert_parallel,
                "Partition whole experts among the ranks (TP_EP, DP_EP) instead of splitting each");
  cmd->add_option("--collective-timeout", request.collective_timeout_seconds,
                  "Seconds a rank may wait for the others in one collective once the model is "
                  "loaded; longer ends every rank, naming the rank and host that went silent (0: "
                  "wait forever)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

const Communicator* ranks() { return world_communicator(); }

bool follow_rank0(Model& model) {
  if (!model.is_follower()) return false;
  model.follow();
  return true;
}

}  // namespace minimax::cli

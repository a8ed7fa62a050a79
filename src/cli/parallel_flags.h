// The flags that split a model over the ranks of an mpirun launch (vLLM's names), shared by every
// command that runs the model, and what a command does on ranks other than 0.
#pragma once

#include <CLI/CLI.hpp>

#include "model/model.h"
#include "parallel/parallel_mode.h"

namespace minimax::cli {

// --tensor-parallel-size, --data-parallel-size, --enable-expert-parallel into `request`.
void add_parallel_flags(CLI::App* cmd, ParallelRequest& request);

// The ranks this process belongs to (null without mpirun).
const Communicator* ranks();

// On ranks other than 0: runs rank 0's steps until it is done with the model, then returns true
// (the command has nothing left to do there: output, HTTP and sampling are rank 0's). False on
// rank 0 and in a single process.
bool follow_rank0(Model& model);

}  // namespace minimax::cli

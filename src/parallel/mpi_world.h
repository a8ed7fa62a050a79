// The process group this run belongs to. Under `mpirun` (Open MPI sets OMPI_COMM_WORLD_SIZE) MPI is
// started and every rank gets a Communicator over MPI_COMM_WORLD; without mpirun, or when the
// binary was built without MPI, there is no group and the world is null (one process, as before).
#pragma once

#include <memory>

#include "parallel/communicator.h"

namespace minimax {

// Starts MPI when launched by mpirun and keeps it up until destroyed (MPI_Finalize). One per
// process, made by main() before anything else runs.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

// The world group of the running MpiSession, or null when this is a single process (no mpirun,
// `-n 1`, or no MPI in this build). A group of one counts as a single process.
const Communicator* world_communicator();

// True when the environment says a launcher (mpirun) started this process as one of several.
bool launched_by_mpirun();

// Whether this build can talk MPI.
bool mpi_available();

}  // namespace minimax

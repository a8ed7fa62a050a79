// MpiSession and the MPI_COMM_WORLD Communicator (Open MPI from Debian). Compiled with or without
// MPI: without it (MINIMAX_HAVE_MPI undefined) the world is always null, and an mpirun launch of
// several ranks is refused with a message saying so.
#include "parallel/mpi_world.h"

#include <fmt/format.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/error.h"
#include "parallel/wait_deadline.h"

#ifdef MINIMAX_HAVE_MPI
#include <mpi.h>
#endif

namespace minimax {
namespace {

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? 0 : std::atoi(v);
}

std::unique_ptr<Communicator>& world_slot() {
  static std::unique_ptr<Communicator> world;
  return world;
}

#ifdef MINIMAX_HAVE_MPI

// MPI counts are int: larger transfers would need derived types, which no step comes near.
int count_of(size_t bytes, const char* what) {
  if (bytes > static_cast<size_t>(std::numeric_limits<int>::max()))
    fail("{}: {} bytes in one MPI transfer is more than 2 GiB", what, bytes);
  return static_cast<int>(bytes);
}

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  fail("MPI {}: {}", what, std::string(text, length));
}

// One call that waits for other ranks, from construction to destruction: its time is added to a
// counter (busy_seconds) and the wait deadline watches it.
class Waiting {
 public:
  Waiting(std::atomic<double>& total, WaitDeadline& deadline, const char* what)
      : total_(total), scope_(deadline, what), start_(std::chrono::steady_clock::now()) {}
  ~Waiting() { total_ += seconds_since(start_); }

 private:
  std::atomic<double>& total_;
  WaitDeadline::Scope scope_;
  std::chrono::steady_clock::time_point start_;
};

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator()
      : deadline_([this](const char* what, double waited) { wait_expired(what, waited); }) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    // Every rank's host name, for the message naming a rank that went silent.
    std::vector<char> names(size_t(size_) * MPI_MAX_PROCESSOR_NAME, 0);
    int length = 0;
    MPI_Get_processor_name(names.data() + size_t(rank_) * MPI_MAX_PROCESSOR_NAME, &length);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, names.data(), MPI_MAX_PROCESSOR_NAME,
                  MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 0; r < size_; ++r)
      hosts_.emplace_back(names.data() + size_t(r) * MPI_MAX_PROCESSOR_NAME);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allreduce_sum(float* data, size_t count) const override {
    Waiting waiting(busy_, deadline_, "allreduce");
    sent_ += count * sizeof(float) * 2 * (size_ - 1) / size_;
    received_ += count * sizeof(float) * 2 * (size_ - 1) / size_;
    check(MPI_Allreduce(MPI_IN_PLACE, data, count_of(count * sizeof(float), "allreduce") / 4,
                        MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
          "allreduce");
  }

  void broadcast(void* data, size_t bytes, int root) const override {
    Waiting waiting(busy_, deadline_, "broadcast");
    (rank_ == root ? sent_ : received_) += bytes;
    check(MPI_Bcast(data, count_of(bytes, "broadcast"), MPI_BYTE, root, MPI_COMM_WORLD),
          "broadcast");
  }

  // A blocking MPI_Bcast spins a core at full speed while it waits; a worker rank waits for its
  // next step for as long as the server is idle. It polls: at once for a millisecond (a step
  // follows the last one quickly while decoding), then with sleeps growing to 2 ms.
  void broadcast_waiting(void* data, size_t bytes, int root) const override {
    Waiting waiting(busy_, deadline_, "broadcast from rank 0 (a step or a heartbeat)");
    (rank_ == root ? sent_ : received_) += bytes;
    MPI_Request request;
    check(MPI_Ibcast(data, count_of(bytes, "broadcast"), MPI_BYTE, root, MPI_COMM_WORLD, &request),
          "broadcast");
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      int done = 0;
      check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "broadcast");
      if (done) return;
      const auto waited = std::chrono::steady_clock::now() - start;
      if (waited < std::chrono::milliseconds(1)) continue;
      std::this_thread::sleep_for(waited < std::chrono::milliseconds(100)
                                      ? std::chrono::microseconds(50)
                                      : std::chrono::microseconds(2000));
    }
  }

  void allgather(const void* send, size_t bytes, void* recv) const override {
    Waiting waiting(busy_, deadline_, "allgather");
    sent_ += bytes * (size_ - 1);
    received_ += bytes * (size_ - 1);
    check(MPI_Allgather(send, count_of(bytes, "allgather"), MPI_BYTE, recv,
                        count_of(bytes, "allgather"), MPI_BYTE, MPI_COMM_WORLD),
          "allgather");
  }

  void alltoallv(const void* send, const size_t* send_bytes, void* recv,
                 const size_t* recv_bytes) const override {
    Waiting waiting(busy_, deadline_, "alltoallv");
    for (int r = 0; r < size_; ++r)
      if (r != rank_) {
        sent_ += send_bytes[r];
        received_ += recv_bytes[r];
      }
    std::vector<int> sc(size_), sd(size_), rc(size_), rd(size_);
    size_t so = 0, ro = 0;
    for (int r = 0; r < size_; ++r) {
      sc[r] = count_of(send_bytes[r], "alltoallv");
      rc[r] = count_of(recv_bytes[r], "alltoallv");
      sd[r] = count_of(so, "alltoallv");
      rd[r] = count_of(ro, "alltoallv");
      so += send_bytes[r];
      ro += recv_bytes[r];
    }
    check(MPI_Alltoallv(send, sc.data(), sd.data(), MPI_BYTE, recv, rc.data(), rd.data(), MPI_BYTE,
                        MPI_COMM_WORLD),
          "alltoallv");
  }

  [[noreturn]] void abort(std::string_view why) const override {
    std::fprintf(stderr, "error: rank %d: %.*s; stopping every rank\n", rank_,
                 static_cast<int>(why.size()), why.data());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();
  }

  double busy_seconds() const override { return busy_; }
  uint64_t sent_bytes() const override { return sent_; }
  uint64_t received_bytes() const override { return received_; }
  void set_wait_timeout(double seconds) const override { deadline_.set_timeout(seconds); }

 private:
  // On the watchdog thread, while this rank's caller still waits inside MPI: the ranks waited for
  // are named (in a collective every other rank is one), then the job ends. MPI_Abort reaches
  // mpirun over its own connection, which the dead link may have cut as well: then it never
  // returns (mpirun waits for the far host's daemon to confirm the kill), so the process ends
  // itself a second later.
  [[noreturn]] void wait_expired(const char* what, double waited) const {
    std::string others;
    for (int r = 0; r < size_; ++r)
      if (r != rank_)
        others += fmt::format("{}rank {} (host {})", others.empty() ? "" : ", ", r, hosts_[r]);
    const std::string text = fmt::format(
        "error: rank {} (host {}) waited {:.1f} s in {} for {}, {}: its host or the link to it is "
        "gone (--collective-timeout {:g}); stopping every rank\n",
        rank_, hosts_[rank_], waited, what, others,
        size_ == 2 ? "which went silent" : "one or more of which went silent", deadline_.timeout());
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      std::_Exit(1);
    }).detach();
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
  }

  int rank_ = 0, size_ = 1;
  std::vector<std::string> hosts_;
  mutable std::atomic<double> busy_ = 0;
  mutable std::atomic<uint64_t> sent_ = 0, received_ = 0;
  mutable WaitDeadline deadline_;
};

#endif

}  // namespace

bool launched_by_mpirun() {
  return env_int("OMPI_COMM_WORLD_SIZE") > 1 || env_int("PMI_SIZE") > 1 || env_int("PMIX_SIZE") > 1;
}

bool mpi_available() {
#ifdef MINIMAX_HAVE_MPI
  return true;
#else
  return false;
#endif
}

MpiSession::MpiSession(int* argc, char*** argv) {
  if (!launched_by_mpirun()) return;
#ifdef MINIMAX_HAVE_MPI
  // The model's collectives are issued by one thread at a time, not always the same one (the
  // server's engine thread, the main thread at start-up and exit).
  int provided = 0;
  // Open MPI starts helper threads here. They must not take SIGINT/SIGTERM, whose default action
  // would end the process (serve waits for them in its own thread to drain first): the threads
  // inherit a mask that blocks them, and this thread gets its own mask back afterwards.
  sigset_t stop_signals, before;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, &before);
  MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (provided < MPI_THREAD_SERIALIZED) {
    std::fprintf(stderr, "error: the MPI library does not allow calls from several threads\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  // Errors come back as codes (check() turns them into Error) instead of aborting inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  auto comm = std::make_unique<MpiCommunicator>();
  if (comm->size() > 1) world_slot() = std::move(comm);
#else
  (void)argc;
  (void)argv;
  std::fprintf(stderr,
               "error: started by mpirun as one of several ranks, but this minimax binary was "
               "built without MPI (install libopenmpi-dev and rebuild)\n");
  std::exit(1);
#endif
}

MpiSession::~MpiSession() {
#ifdef MINIMAX_HAVE_MPI
  int started = 0;
  MPI_Initialized(&started);
  if (!started) return;
  world_slot().reset();
  int finished = 0;
  MPI_Finalized(&finished);
  if (!finished) MPI_Finalize();
#endif
}

const Communicator* world_communicator() { return world_slot().get(); }

}  // namespace minimax

// `mpirun -np N mlprof ranks DIR` (src/cli/mpi_ranks.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "cli/command.h"

namespace mlprof::cli {

// Whether this process was started by mpirun (OpenMPI, MPICH, PMIx) among more than one.
bool launched_by_mpi();
// This process' number among them (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK), 0 when unknown.
int mpi_process_rank();
// Whether this binary was built with MPI.
bool mpi_available();
// Which process (0..processes-1) reduces each file: largest first onto the least loaded.
std::vector<int> shard_by_size(const std::vector<uint64_t>& sizes, int processes);
// `ranks` across the MPI processes; process 0 prints what the single-process run prints. Every
// process returns the same exit code.
int run_ranks_mpi(const AnalysisArgs& a, const AnalysisOptions& options, const TextOptions& text);

}  // namespace mlprof::cli

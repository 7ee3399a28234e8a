// `mpirun -np N mlprof ranks DIR`: the rank files are sharded across the MPI processes (balanced
// by file size), each reduces its share to per-rank summaries with its cores, the summaries are
// gathered to MPI rank 0, which runs the cross-rank analyses and writes the output: the same
// bytes as the single-process run. Built when CMake finds MPI (MLPROF_HAVE_MPI); without it,
// mlprof under mpirun says so instead of printing N copies.
#include "cli/mpi_ranks.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <numeric>

#include "mlprof/import.h"

#ifdef MLPROF_HAVE_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only (the C++ bindings need their own library)
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace mlprof::cli {

bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && std::atoi(v) > 1) return true;
  }
  return false;
}

int mpi_process_rank() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    const char* v = std::getenv(var);
    if (v != nullptr) return std::atoi(v);
  }
  return 0;
}

std::vector<int> shard_by_size(const std::vector<uint64_t>& sizes, int processes) {
  // Largest first onto the least loaded process (LPT); ties by file order and process number,
  // so every process computes the same assignment.
  std::vector<size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  std::vector<uint64_t> load(static_cast<size_t>(std::max(processes, 1)), 0);
  std::vector<int> owner(sizes.size(), 0);
  for (size_t i : order) {
    size_t p = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    owner[i] = static_cast<int>(p);
    load[p] += std::max<uint64_t>(sizes[i], 1);
  }
  return owner;
}

#ifndef MLPROF_HAVE_MPI

bool mpi_available() { return false; }

int run_ranks_mpi(const AnalysisArgs&, const AnalysisOptions&, const TextOptions&) {
  std::fprintf(stderr,
               "mlprof: built without MPI (Debian libopenmpi-dev at build time): run `mlprof "
               "ranks` without mpirun\n");
  return kExitBadInput;
}

#else

bool mpi_available() { return true; }

namespace {

void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }

bool get_u64(std::string_view in, size_t& pos, uint64_t& v) {
  if (in.size() - pos < 8) return false;
  std::memcpy(&v, in.data() + pos, 8);
  pos += 8;
  return true;
}

// One process's share: its summaries, and its failed files as (global file index, message).
std::string encode_share(const std::vector<RankSummary>& summaries,
                         const std::vector<std::pair<uint64_t, std::string> >& errors) {
  std::string out;
  std::string s = encode_rank_summaries(summaries);
  put_u64(out, s.size());
  out += s;
  put_u64(out, errors.size());
  for (const auto& [index, message] : errors) {
    put_u64(out, index);
    put_u64(out, message.size());
    out += message;
  }
  return out;
}

bool decode_share(std::string_view in, std::vector<RankSummary>& summaries,
                  std::vector<std::pair<uint64_t, std::string> >& errors) {
  size_t pos = 0;
  uint64_t n = 0;
  if (!get_u64(in, pos, n) || in.size() - pos < n) return false;
  auto s = decode_rank_summaries(in.substr(pos, n));
  if (!s) return false;
  pos += n;
  for (RankSummary& x : s.value()) summaries.push_back(std::move(x));
  if (!get_u64(in, pos, n)) return false;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t index = 0, len = 0;
    if (!get_u64(in, pos, index) || !get_u64(in, pos, len) || in.size() - pos < len) return false;
    errors.emplace_back(index, std::string(in.substr(pos, len)));
    pos += len;
  }
  return pos == in.size();
}

int finish(int rc) {
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}

}  // namespace

int run_ranks_mpi(const AnalysisArgs& a, const AnalysisOptions& options, const TextOptions& text) {
  MPI_Init(nullptr, nullptr);
  int me = 0, processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);

  // Every process lists the directory (the same files, sorted) and computes the same shards.
  Result<Input> in = open_input(a.path, {}, InputAccept::kRankDir);
  if (!in) {
    if (me == 0) std::fprintf(stderr, "mlprof: %s\n", in.error().c_str());
    return finish(kExitBadInput);
  }
  const std::vector<std::string>& all = in->rank_files;
  std::vector<uint64_t> sizes;
  for (const std::string& f : all) {
    std::error_code ec;
    uint64_t n = std::filesystem::file_size(f, ec);
    sizes.push_back(ec ? 0 : n);
  }
  std::vector<int> owner = shard_by_size(sizes, processes);
  std::vector<std::string> mine;
  std::vector<uint64_t> mine_index;
  for (size_t i = 0; i < all.size(); ++i)
    if (owner[i] == me) {
      mine.push_back(all[i]);
      mine_index.push_back(i);
    }

  std::vector<std::string> errors;
  std::vector<size_t> failed;  // positions in `mine` of the files in `errors`
  std::vector<RankSummary> summaries =
      reduce_rank_files(mine, rank_loader(true), a.threads, options.ranks, errors, {}, &failed);
  std::vector<std::pair<uint64_t, std::string> > indexed;  // by global file index
  for (size_t k = 0; k < errors.size(); ++k) indexed.emplace_back(mine_index[failed[k]], errors[k]);
  std::string share = encode_share(summaries, indexed);
  summaries.clear();

  // Gather the shares to process 0.
  int bytes = share.size() > static_cast<size_t>(INT32_MAX) ? -1 : static_cast<int>(share.size());
  std::vector<int> counts(static_cast<size_t>(processes), 0);
  MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  bool too_big = false;
  std::vector<int> displs(static_cast<size_t>(processes), 0);
  int64_t total = 0;
  if (me == 0) {
    for (int p = 0; p < processes; ++p) {
      too_big |= counts[static_cast<size_t>(p)] < 0;
      displs[static_cast<size_t>(p)] = static_cast<int>(std::min<int64_t>(total, INT32_MAX));
      total += std::max(counts[static_cast<size_t>(p)], 0);
    }
    too_big |= total > INT32_MAX;
  }
  int abort_gather = too_big ? 1 : 0;
  MPI_Bcast(&abort_gather, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (abort_gather) {
    if (me == 0) std::fprintf(stderr, "mlprof: rank summaries over 2 GiB: use fewer processes\n");
    return finish(kExitFailure);
  }
  std::string gathered(me == 0 ? static_cast<size_t>(total) : 0, '\0');
  MPI_Gatherv(share.data(), bytes, MPI_BYTE, gathered.data(), counts.data(), displs.data(),
              MPI_BYTE, 0, MPI_COMM_WORLD);
  std::string().swap(share);
  if (me != 0) return finish(kExitOk);

  std::vector<std::pair<uint64_t, std::string> > all_errors;
  for (int p = 0; p < processes; ++p) {
    std::string_view part(gathered.data() + displs[static_cast<size_t>(p)],
                          static_cast<size_t>(counts[static_cast<size_t>(p)]));
    if (!decode_share(part, summaries, all_errors)) {
      std::fprintf(stderr, "mlprof: MPI process %d sent a damaged summary block\n", p);
      return finish(kExitFailure);
    }
  }
  std::string().swap(gathered);  // decoded: not held beside the summaries
  std::sort(all_errors.begin(), all_errors.end());
  errors.clear();
  for (auto& [index, message] : all_errors) errors.push_back(std::move(message));
  auto set = set_of_summaries(a.path, std::move(summaries), std::move(errors), options);
  if (!set) return finish(kExitBadInput);
  int rc = output_analysis(*set, AnalysisId::kRanks, a, text);
  std::cout.flush();
  return finish(rc);
}

#endif

}  // namespace mlprof::cli

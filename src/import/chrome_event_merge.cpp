// Merging the tables of parsers that each parsed some chunks of one file (ChromeEventParser's
// kPart mode) into one kDirect parser, exactly as if that parser had read every chunk itself.
//
// One walk over the chunks in file order assigns merged ids (strings, processes, tracks and
// counter series in order of first appearance, as a single parser interns them) and replays the
// logged ops (B/E pairs, flow pairs, metadata, GPU track marks) against the merged state. The
// walk only plans where each run of rows lands; the columns are then gathered one at a time and
// each source column is freed as soon as it is copied, so the merge needs one column of extra
// memory, not a second copy of the tables.
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "import/chrome_event_parser.h"

namespace mlprof::import {

namespace {

// The rows of one part that land, in order, at `dest` of the merged tables.
struct Group {
  uint32_t part;
  uint32_t from[5], to[5], dest[5];  // slices, instants, counters, memory, args
  int64_t arg_delta;                 // merged args index - local args index, in this group
};

enum Table { kSlices, kInstants, kCounters, kMemory, kArgs };

// Gives the pages of src[0, upto) back to the kernel once they have been copied, so that a
// column's merged copy grows while its sources shrink: without this, each column briefly
// existed twice (the merged one zero-filled up front), and the args column, the largest (16
// bytes an arg, ~6 per Kineto event), set the import's peak RSS. Only whole pages inside the
// vector's elements are released (the heap's chunk headers lie outside them); they are never
// read again, since the source is freed after the gather.
template <typename T>
void release_copied(const std::vector<T>& src, size_t upto, uintptr_t* released) {
  constexpr uintptr_t kPage = 4096, kStep = 4u << 20;  // in steps of 4 MiB: few system calls
  uintptr_t begin = reinterpret_cast<uintptr_t>(src.data());
  uintptr_t from = std::max(*released, (begin + kPage - 1) & ~(kPage - 1));
  uintptr_t to = (begin + upto * sizeof(T)) & ~(kPage - 1);
  if (to < from + kStep && upto < src.size()) return;
  if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
  *released = std::max(from, to);
}

// Copies one column of every part (`sources`, by part) into `out` (sized `n`), group by group,
// through `map`, then frees the source columns. `release`: only for the args, the column that
// sets the peak; the others' freed memory is left resident for the next column to reuse (pages
// given back must be faulted in again: 10% more page-zeroing CPU when every column did it). Rows
// between groups (the slices of B/E pairs, the begin args copied after an end's) are zero here and
// written after the gather.
template <typename T, typename Map>
void gather(std::vector<T>& out, size_t n, const std::vector<Group>& groups, Table table,
            const std::vector<std::vector<T>*>& sources, Map map, bool release = false) {
  out.clear();
  out.reserve(n);  // not resized: pages are touched as rows arrive, while sources are released
  std::vector<uintptr_t> released(sources.size(), 0);
  for (const Group& g : groups) {
    const std::vector<T>& src = *sources[g.part];
    if (out.size() < g.dest[table]) out.resize(g.dest[table]);
    for (uint32_t i = g.from[table]; i < g.to[table]; ++i) out.push_back(map(g, src[i]));
    if (release) release_copied(src, g.to[table], &released[g.part]);
  }
  out.resize(n);
  for (std::vector<T>* src : sources) std::vector<T>().swap(*src);
}

// Where every row of the parts lands (merge_parts' walk over the chunks in file order).
struct Maps {  // a part's local ids -> merged ids
  std::vector<StringId> str;
  std::vector<uint32_t> proc, track, series;
};
struct OpSlice {  // the slice of a replayed B/E pair
  uint32_t dest;
  SliceTable::Row row;
};
struct ArgCopy {  // a begin's args copied after its end's
  uint32_t src, count, dest;
};
struct MergePlan {
  std::vector<Maps> maps;  // by part
  std::vector<Group> groups;
  std::vector<OpSlice> op_slices;
  std::vector<ArgCopy> arg_copies;
  uint32_t dest[5] = {0, 0, 0, 0, 0};  // rows of each merged table
};

// The columns of `parts` gathered into T's as `plan` says, each source column freed as it is
// copied (one column of extra memory at most).
void gather_columns(Trace& T, const std::vector<Trace*>& parts, const MergePlan& plan) {
  auto same = [](const Group&, auto v) { return v; };
  auto str = [&](const Group& g, StringId v) { return plan.maps[g.part].str[v]; };
  auto track = [&](const Group& g, uint32_t v) { return plan.maps[g.part].track[v]; };
  auto series = [&](const Group& g, uint32_t v) { return plan.maps[g.part].series[v]; };
  auto args_begin = [](const Group& g, uint32_t v) {
    return static_cast<uint32_t>(static_cast<int64_t>(v) + g.arg_delta);
  };
  // column(&Trace::slices, &SliceTable::ts, ...): that column of every part into T's.
  auto column = [&](auto table, auto col, Table which, auto map) {
    using Column = std::remove_reference_t<decltype((T.*table).*col)>;
    std::vector<Column*> sources;
    for (Trace* part : parts) sources.push_back(&((part->*table).*col));
    gather((T.*table).*col, plan.dest[which], plan.groups, which, sources, map);
  };
  // Every input column of the tables parts fill row by row, remapped by what it references
  // (the schema in mlprof/trace.h). Flows are rebuilt by the replayed ops; stacks never come
  // from Chrome JSON.
  auto table = [&](auto table_member, Table which) {
    using Rows = std::remove_reference_t<decltype(T.*table_member)>;
    schema::for_each_input_column<Rows>([&](auto c) {
      constexpr schema::Ref ref = decltype(c)::ref;
      if constexpr (ref == schema::Ref::kNone || ref == schema::Ref::kStack)
        column(table_member, c.member, which, same);
      else if constexpr (ref == schema::Ref::kString)
        column(table_member, c.member, which, str);
      else if constexpr (ref == schema::Ref::kTrack)
        column(table_member, c.member, which, track);
      else if constexpr (ref == schema::Ref::kSeries)
        column(table_member, c.member, which, series);
      else if constexpr (ref == schema::Ref::kArgs)
        column(table_member, c.member, which, args_begin);
      else
        static_assert(ref == schema::Ref::kNone, "merge: no remapping for this reference kind");
    });
  };
  table(&Trace::slices, kSlices);
  for (const OpSlice& o : plan.op_slices) schema::set_row(T.slices, o.dest, o.row);
  table(&Trace::instants, kInstants);
  table(&Trace::counters, kCounters);
  table(&Trace::memory, kMemory);

  std::vector<std::vector<Arg>*> arg_sources;
  for (Trace* part : parts) arg_sources.push_back(&part->args);
  gather(
      T.args, plan.dest[kArgs], plan.groups, kArgs, arg_sources,
      [&](const Group& g, Arg a) {
        const std::vector<StringId>& sm = plan.maps[g.part].str;
        a.key = sm[a.key];
        if (a.type == ArgType::kString || a.type == ArgType::kJson) a.s = sm[a.s];
        return a;
      },
      /*release=*/true);
  for (const ArgCopy& c : plan.arg_copies)
    for (uint32_t k = 0; k < c.count; ++k) T.args[c.dest + k] = T.args[c.src + k];
}

}  // namespace

// merge_parts' phases, with the parsers' private state (a friend of ChromeEventParser).
struct ChromeMerge {
  using Parser = ChromeEventParser;
  using Parts = std::vector<std::unique_ptr<ChromeEventParser>>;
  struct ChunkRef {
    uint64_t seq;
    uint32_t part, mark;
  };

  static void as_array(const Parser::RowPos& r, uint32_t (&a)[5]) {
    a[kSlices] = r.slices;
    a[kInstants] = r.instants;
    a[kCounters] = r.counters;
    a[kMemory] = r.memory;
    a[kArgs] = r.args;
  }

  // Every part's chunks in file order; each part's marks end with a sentinel (where its last
  // chunk ends), and its counts and flags are added to `self`'s.
  static std::vector<ChunkRef> collect_chunks(Parser& self, Parts& parts) {
    std::vector<ChunkRef> chunks;
    for (uint32_t p = 0; p < parts.size(); ++p) {
      Parser& P = *parts[p];
      P.drop_json_parser();  // simdjson's buffers: freed before the merged columns are allocated
      Trace& L = P.b_.trace();
      for (uint32_t m = 0; m < P.marks_.size(); ++m) chunks.push_back({P.marks_[m].seq, p, m});
      // Sentinel: where the part's last chunk ends.
      P.marks_.push_back(Parser::ChunkMark{UINT64_MAX, static_cast<uint32_t>(L.strings.size()),
                                           static_cast<uint32_t>(L.processes.size()),
                                           static_cast<uint32_t>(L.tracks.size()),
                                           static_cast<uint32_t>(L.counter_series.size()),
                                           static_cast<uint32_t>(P.ops_.size()), P.row_pos()});
      self.saw_string_pid_ |= P.saw_string_pid_;
      self.saw_category_ |= P.saw_category_;
      self.events_ += P.events_;
      self.b_.trace().meta.import_stats.merge(L.meta.import_stats);
    }
    std::sort(chunks.begin(), chunks.end(),
              [](const ChunkRef& a, const ChunkRef& b) { return a.seq < b.seq; });
    return chunks;
  }

  // The local ids part P created in the chunk that ends at `end`, in the order it created them,
  // mapped to merged ids.
  static void map_new_ids(Parser& self, Parser& P, Maps& M, const Parser::ChunkMark& end) {
    Trace& L = P.b_.trace();
    TraceBuilder& b = self.b_;
    for (StringId id = static_cast<StringId>(M.str.size()); id < end.strings; ++id)
      M.str.push_back(b.intern(L.str(id)));
    for (uint32_t i = static_cast<uint32_t>(M.proc.size()); i < end.processes; ++i) {
      const Process& lp = L.processes[i];
      M.proc.push_back(lp.labeled ? b.process_labeled(L.str(lp.label)) : b.process(lp.pid));
    }
    for (uint32_t i = static_cast<uint32_t>(M.track.size()); i < end.tracks; ++i) {
      const Track& lt = L.tracks[i];
      uint32_t proc = M.proc[lt.process];
      if (lt.kind == TrackKind::kAsync)
        M.track.push_back(b.async_track(proc, M.str[lt.name], static_cast<uint64_t>(lt.tid)));
      else if (lt.labeled)
        M.track.push_back(b.thread_track_labeled(proc, L.str(lt.label)));
      else
        M.track.push_back(b.thread_track(proc, lt.tid));
    }
    for (uint32_t i = static_cast<uint32_t>(M.series.size()); i < end.series; ++i) {
      const CounterSeries& ls = L.counter_series[i];
      M.series.push_back(b.counter_series(M.proc[ls.process], M.str[ls.name]));
    }
  }

  // The rows of `part` from `cur` up to `to_pos` land next in the merged tables (a group, if
  // any); returns the group's args delta.
  static int64_t flush(MergePlan& plan, uint32_t part, uint32_t (&cur)[5],
                       const Parser::RowPos& to_pos) {
    uint32_t* dest = plan.dest;
    Group g;
    g.part = part;
    as_array(to_pos, g.to);
    for (int k = 0; k < 5; ++k) {
      g.from[k] = cur[k];
      g.dest[k] = dest[k];
      dest[k] += g.to[k] - g.from[k];
      cur[k] = g.to[k];
    }
    g.arg_delta = static_cast<int64_t>(g.dest[kArgs]) - g.from[kArgs];
    if (g.to[kSlices] > g.from[kSlices] || g.to[kInstants] > g.from[kInstants] ||
        g.to[kCounters] > g.from[kCounters] || g.to[kMemory] > g.from[kMemory] ||
        g.to[kArgs] > g.from[kArgs])
      plan.groups.push_back(g);
    return g.arg_delta;
  }

  // One logged B/E op of part `part` replayed against the merged open stacks.
  static void replay_begin_end(Parser& self, Parts& parts, uint32_t part, const Parser::Op& op,
                               uint32_t (&cur)[5], MergePlan& plan) {
    Parser& P = *parts[part];
    Trace& L = P.b_.trace();
    Maps& M = plan.maps[part];
    uint32_t* dest = plan.dest;
    int64_t delta = flush(plan, part, cur, op.rows);
    uint32_t track = M.track[op.track];
    ArgRange args{static_cast<uint32_t>(op.args.begin + delta), op.args.count};
    auto& stack = self.open_[track];
    if (op.ph == 'B' || op.ph == 'b') {
      stack.push_back(
          Parser::Open{op.ts, M.str[op.name], M.str[op.cat], args, op.value, part, op.args.begin});
      return;
    }
    if (stack.empty()) {
      self.unmatched_end();
      return;
    }
    Parser::Open o = stack.back();
    stack.pop_back();
    if (op.ts < o.ts) self.end_before_begin();
    ArgRange slice_args = o.args;
    if (op.args.count) {
      // As the single parser does: the begin's args whose key the end does not have are
      // copied after the end's (the end's are the last ones pushed), so one range holds
      // both. Keys compared as merged ids (each part's strings are mapped by now).
      const std::vector<Arg>& begin_args = parts[o.part]->b_.trace().args;
      const std::vector<StringId>& begin_str = plan.maps[o.part].str;
      uint32_t kept = 0;
      for (uint32_t i = 0; i < o.args.count; ++i) {
        StringId key = begin_str[begin_args[o.local_args + i].key];
        bool in_end = false;
        for (uint32_t j = op.args.begin; j < op.args.begin + op.args.count && !in_end; ++j)
          in_end = M.str[L.args[j].key] == key;
        if (in_end) continue;
        plan.arg_copies.push_back(ArgCopy{o.args.begin + i, 1, dest[kArgs]});
        ++dest[kArgs];
        ++kept;
      }
      slice_args = ArgRange{args.begin, args.count + kept};
    }
    plan.op_slices.push_back(
        OpSlice{dest[kSlices], Parser::pair_slice(o, op.ph, track, op.ts, op.value, M.str[op.name],
                                                  M.str[op.cat], slice_args)});
    ++dest[kSlices];
  }

  // One chunk: its new ids mapped, its rows planned and its logged ops replayed, in order.
  static void replay_chunk(Parser& self, Parts& parts, const ChunkRef& c, MergePlan& plan) {
    Parser& P = *parts[c.part];
    Maps& M = plan.maps[c.part];
    const Parser::ChunkMark& m = P.marks_[c.mark];
    const Parser::ChunkMark& end = P.marks_[c.mark + 1];
    map_new_ids(self, P, M, end);

    uint32_t cur[5];
    as_array(m.rows, cur);
    for (uint32_t oi = m.ops; oi < end.ops; ++oi) {
      const Parser::Op& op = P.ops_[oi];
      switch (op.kind) {
        case Parser::OpKind::kBeginEnd:
          replay_begin_end(self, parts, c.part, op, cur, plan);
          break;
        case Parser::OpKind::kFlow:
          self.flow(op.ph, M.str[op.cat], op.id, M.track[op.track], op.ts, op.value != 0);
          break;
        case Parser::OpKind::kMeta:
          self.apply_meta(op.meta, M.track[op.track], M.str[op.name], M.str[op.cat], op.value);
          break;
        case Parser::OpKind::kGpuTrack:
          self.gpu_track(M.track[op.track], static_cast<int32_t>(op.value),
                         static_cast<int64_t>(op.id));
          break;
      }
    }
    flush(plan, c.part, cur, end.rows);
  }
};

void ChromeEventParser::merge_parts(std::vector<std::unique_ptr<ChromeEventParser>>& parts) {
  std::vector<ChromeMerge::ChunkRef> chunks = ChromeMerge::collect_chunks(*this, parts);
  MergePlan plan;
  plan.maps.resize(parts.size());
  for (const ChromeMerge::ChunkRef& c : chunks) ChromeMerge::replay_chunk(*this, parts, c, plan);

  // The logged ops (one per flow endpoint: ~40 MB per 1M Kineto events) are replayed: freed
  // before the columns are gathered, which is when the import's memory peaks.
  for (auto& part : parts) {
    std::vector<Op>().swap(part->ops_);
    std::vector<ChunkMark>().swap(part->marks_);
  }

  std::vector<Trace*> traces;
  for (auto& part : parts) traces.push_back(&part->b_.trace());
  gather_columns(b_.trace(), traces, plan);
  parts.clear();
}

}  // namespace mlprof::import

#include "render/memory_snapshot_render.h"

#include <cstdio>

#include "render/text_table.h"
#include "trace/units.h"

namespace mlprof {
namespace {

std::string b(int64_t v) { return format_bytes(static_cast<double>(v)); }
std::string u(uint64_t v) { return std::to_string(v); }
// " (+1.622 s)": a time_us relative to the snapshot's first recorded time; "" without times.
std::string at(int64_t time_us, int64_t start_us) {
  if (time_us < 0 || start_us < 0) return "";
  return " (+" + format_duration_ns(static_cast<double>(time_us - start_us) * 1e3) + ")";
}

// `bytes`: what the column sums: the dump's block sizes, or the replay's sizes (a trace entry's
// own size, 4 B for a 4-byte tensor in a 512-byte block; a block's size for what was live before
// the trace). Both were headed "bytes", so one site read 512 B in one table and 4 B in the next.
// A caller frame as the sites are written, "client.py:206:pull_model": the directories of
// "C:\\research\\DeComFL\\cezo_fl\\client.py:206:pull_model" made every row too long, cut in the
// middle
// ("C:\\research\\DeComFL\\cezo_fl\\gradie..._gradient_estimator_given_seed_and_grad"). --json
// keeps the whole path.
std::string frame_text(const std::string& f) {
  size_t colon = f.rfind(':');
  if (colon == std::string::npos || colon == 0) return f;
  colon = f.rfind(':', colon - 1);  // before the line number
  if (colon == std::string::npos) return f;
  size_t slash = f.find_last_of("/\\", colon);
  return slash == std::string::npos ? f : f.substr(slash + 1);
}

void stack_table(std::string& out, const char* title, const std::vector<StackBytes>& rows,
                 size_t width, bool with_frames, const char* bytes = "block bytes") {
  if (rows.empty()) return;
  TextTable t;
  t.add_column(title, TextTable::Align::kLeft);
  t.add_column(bytes);
  t.add_column("blocks");
  for (const StackBytes& r : rows) {
    t.add_row({r.site, b(r.bytes), u(r.blocks)});
    if (with_frames)
      for (size_t k = 1; k < r.frames.size(); ++k)
        t.add_row({"    " + frame_text(r.frames[k]), "", ""});
  }
  out += t.render(width);
}

void write_stacks(JsonWriter& w, std::string_view key, const std::vector<StackBytes>& rows) {
  w.key(key).begin_array();
  for (const StackBytes& r : rows) {
    w.begin_object().field("site", r.site).field("bytes", r.bytes).field("blocks", r.blocks);
    w.key("frames").begin_array();
    for (const std::string& f : r.frames) w.value(f);
    w.end_array().end_object();
  }
  w.end_array();
}

void write_group(JsonWriter& w, const SnapshotGroup& g) {
  w.begin_object()
      .field("name", g.name)
      .field("device", g.device)
      .field("stream", g.stream)
      .field("pool", std::to_string(g.pool_a) + "," + std::to_string(g.pool_b))
      .field("segments", g.segments)
      .field("blocks", g.blocks)
      .field("reserved_bytes", g.reserved)
      .field("allocated_bytes", g.allocated)
      .field("requested_bytes", g.requested)
      .field("inactive_bytes", g.inactive)
      .field("awaiting_free_bytes", g.awaiting_free)
      .field("largest_inactive_bytes", g.largest_inactive)
      .field("unused_fraction", g.unused_fraction)
      .field("fragmentation", g.fragmentation)
      .end_object();
}

}  // namespace

std::string render_memory_snapshot_text(const SnapshotResult& r, size_t width) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "CUDA memory snapshot (%s, %s layout): %llu segments (%llu large, %llu small), "
                "%llu blocks\n",
                r.format.c_str(), r.layout.c_str(), static_cast<unsigned long long>(r.segments),
                static_cast<unsigned long long>(r.large_segments),
                static_cast<unsigned long long>(r.small_segments),
                static_cast<unsigned long long>(r.blocks));
  out += buf;
  std::snprintf(buf, sizeof buf,
                "  reserved %s, allocated %s, requested %s; cached but unused %s (%s), largest "
                "free block %s, fragmentation %s\n",
                b(r.reserved).c_str(), b(r.allocated).c_str(), b(r.requested).c_str(),
                b(r.reserved - r.allocated).c_str(), format_percent(r.unused_fraction).c_str(),
                b(r.largest_inactive).c_str(), format_percent(r.fragmentation).c_str());
  out += buf;
  out += "  blocks:";
  for (int k = 0; k < 4; ++k)
    if (r.blocks_by_state[k])
      out += std::string(" ") + block_state_name(static_cast<BlockState>(k)) + " " +
             u(r.blocks_by_state[k]) + " (" + b(r.bytes_by_state[k]) + ")";
  out += "\n";
  if (r.expandable_segments || r.private_pool_segments)
    out += "  expandable segments " + u(r.expandable_segments) + ", in private pools " +
           u(r.private_pool_segments) + "\n";
  out += "\n";
  auto groups = [&](const char* title, const std::vector<SnapshotGroup>& gs) {
    if (gs.empty()) return;
    TextTable t;
    t.add_column(title, TextTable::Align::kLeft);
    for (const char* h : {"segments", "reserved", "allocated", "unused", "largest free", "frag"})
      t.add_column(h);
    for (const SnapshotGroup& g : gs)
      t.add_row({g.name, u(g.segments), b(g.reserved), b(g.allocated), b(g.inactive),
                 b(g.largest_inactive), format_percent(g.fragmentation)});
    out += t.render(width) + "\n";
  };
  groups("stream", r.streams);
  if (r.pools.size() > 1 || r.private_pool_segments) groups("pool", r.pools);
  if (!r.fragmented_segments.empty()) {
    TextTable t;
    t.add_column("most unused segments: allocated at", TextTable::Align::kLeft);
    for (const char* h : {"address", "size", "allocated", "unused", "free blocks", "frag"})
      t.add_column(h);
    for (const SnapshotSegmentRow& s : r.fragmented_segments) {
      std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(s.address));
      t.add_row({s.site.empty() ? "(no frames)" : s.site, buf, b(s.total), b(s.allocated),
                 b(s.inactive), u(s.inactive_blocks), format_percent(s.fragmentation)});
    }
    // The allocating site whole ("adam_forward.py...n_norm_paramwise" when cut to 100 columns).
    out += t.render_uncut() + "\n";
  }
  stack_table(out, "live memory by innermost frame", r.live_by_site, width, false);
  out += "\n";
  for (const SnapshotReplay& d : r.devices) {
    std::snprintf(buf, sizeof buf, "GPU %d trace: %llu %s", d.device,
                  static_cast<unsigned long long>(d.entries), d.entries == 1 ? "entry" : "entries");
    out += buf;
    bool first = true;
    for (int k = 0; k < kSnapshotActionCount; ++k)
      if (d.action_counts[k]) {
        out += first ? " (" : ", ";
        out += std::string(snapshot_action_name(static_cast<SnapshotAction>(k))) + " " +
               u(d.action_counts[k]);
        first = false;
      }
    out += first ? "\n" : ")\n";
    if (d.has_time) {
      std::snprintf(
          buf, sizeof buf, "  spans %s%s\n",
          format_duration_ns(static_cast<double>(d.last_time_us - d.first_time_us) * 1e3).c_str(),
          d.time_monotonic ? "" : " (time_us not monotonic)");
      out += buf;
    }
    out += "  active memory (replayed as memory_viz): start " + b(d.start_active) + ", peak " +
           b(d.peak_active) +
           (d.peak_index >= 0
                ? " at entry " + std::to_string(d.peak_index) + at(d.peak_time_us, r.start_time_us)
                : std::string(" at the start")) +
           ", end " + b(d.end_active) + "\n";
    out += "  reserved: start " + b(d.start_reserved) + ", peak " + b(d.peak_reserved) + ", end " +
           b(d.end_reserved) + "\n";
    if (d.frees_without_alloc || d.blocks_not_in_trace)
      out += "  live before the trace: " + u(d.blocks_not_in_trace) +
             (d.blocks_not_in_trace == 1 ? " block" : " blocks") + " of the dump and " +
             u(d.frees_without_alloc) + (d.frees_without_alloc == 1 ? " free" : " frees") +
             " with no alloc in the trace\n";
    std::snprintf(buf, sizeof buf, "live at the peak (%llu allocations): stack",
                  static_cast<unsigned long long>(d.live_at_peak_blocks));
    stack_table(out, buf, d.live_at_peak, width, true, "replayed bytes");
    for (const SnapshotOom& o : d.ooms) {
      out += "  OOM at entry " + u(o.index) + at(o.time_us, r.start_time_us) + ": " +
             b(o.requested) + " requested" + (o.site.empty() ? std::string() : " from " + o.site) +
             ", " + b(o.device_free) + " free on the device, " + b(o.reserved) + " reserved, " +
             b(o.active) + " active\n";
      stack_table(out, "held at the OOM: stack", o.holders, width, true, "replayed bytes");
    }
    out += "\n";
  }
  for (const std::string& rec : r.recommendations) out += "* " + rec + "\n";
  return out;
}

void write_memory_snapshot_json(JsonWriter& w, const SnapshotResult& r) {
  w.begin_object();
  w.field("kind", "cuda_memory_snapshot").field("source", r.source).field("format", r.format);
  w.field("layout", r.layout).field("segments", r.segments).field("blocks", r.blocks);
  w.field("large_segments", r.large_segments).field("small_segments", r.small_segments);
  w.field("expandable_segments", r.expandable_segments);
  w.field("private_pool_segments", r.private_pool_segments);
  w.key("blocks_by_state").begin_object();
  for (int k = 0; k < 4; ++k)
    if (r.blocks_by_state[k])
      w.field(block_state_name(static_cast<BlockState>(k)), r.blocks_by_state[k]);
  w.end_object();
  w.key("bytes_by_state").begin_object();
  for (int k = 0; k < 4; ++k)
    if (r.blocks_by_state[k])
      w.field(block_state_name(static_cast<BlockState>(k)), r.bytes_by_state[k]);
  w.end_object();
  w.field("reserved_bytes", r.reserved).field("allocated_bytes", r.allocated);
  w.field("active_bytes", r.active).field("requested_bytes", r.requested);
  w.field("largest_segment_bytes", r.largest_segment);
  w.field("largest_inactive_bytes", r.largest_inactive);
  w.field("unused_fraction", r.unused_fraction).field("fragmentation", r.fragmentation);
  w.key("streams").begin_array();
  for (const SnapshotGroup& g : r.streams) write_group(w, g);
  w.end_array();
  w.key("pools").begin_array();
  for (const SnapshotGroup& g : r.pools) write_group(w, g);
  w.end_array();
  w.key("fragmented_segments").begin_array();
  for (const SnapshotSegmentRow& s : r.fragmented_segments)
    w.begin_object()
        .field("device", s.device)
        .field("address", s.address)
        .field("stream", s.stream)
        .field("large", s.large)
        .field("expandable", s.expandable)
        .field("private_pool", s.private_pool)
        .field("total_bytes", s.total)
        .field("allocated_bytes", s.allocated)
        .field("inactive_bytes", s.inactive)
        .field("largest_inactive_bytes", s.largest_inactive)
        .field("blocks", s.blocks)
        .field("inactive_blocks", s.inactive_blocks)
        .field("fragmentation", s.fragmentation)
        .field("site", s.site)
        .end_object();
  w.end_array();
  write_stacks(w, "live_by_site", r.live_by_site);
  write_stacks(w, "live_by_stack", r.live_by_stack);
  w.key("devices").begin_array();
  for (const SnapshotReplay& d : r.devices) {
    w.begin_object().field("device", d.device).field("entries", d.entries);
    w.key("actions").begin_object();
    for (int k = 0; k < kSnapshotActionCount; ++k)
      if (d.action_counts[k])
        w.field(snapshot_action_name(static_cast<SnapshotAction>(k)), d.action_counts[k]);
    w.end_object();
    w.field("alloc_bytes", d.alloc_bytes).field("free_requested_bytes", d.free_requested_bytes);
    w.field("free_completed_bytes", d.free_completed_bytes);
    w.field("segment_alloc_bytes", d.segment_alloc_bytes)
        .field("segment_free_bytes", d.segment_free_bytes);
    if (d.has_time) {
      w.field("first_time_us", d.first_time_us).field("last_time_us", d.last_time_us);
      w.field("time_monotonic", d.time_monotonic);
    }
    w.field("frees_without_alloc", d.frees_without_alloc);
    w.field("blocks_not_in_trace", d.blocks_not_in_trace);
    w.field("start_active_bytes", d.start_active).field("peak_active_bytes", d.peak_active);
    w.key("peak_index");
    if (d.peak_index >= 0)
      w.value(d.peak_index);
    else
      w.null();
    if (d.peak_time_us >= 0) w.field("peak_time_us", d.peak_time_us);
    w.field("end_active_bytes", d.end_active);
    w.field("start_reserved_bytes", d.start_reserved).field("peak_reserved_bytes", d.peak_reserved);
    w.field("end_reserved_bytes", d.end_reserved);
    w.field("live_at_peak_allocations", d.live_at_peak_blocks);
    write_stacks(w, "live_at_peak", d.live_at_peak);
    w.key("ooms").begin_array();
    for (const SnapshotOom& o : d.ooms) {
      w.begin_object().field("index", o.index).field("requested_bytes", o.requested);
      if (o.time_us >= 0) w.field("time_us", o.time_us);
      w.field("device_free_bytes", o.device_free).field("stream", o.stream).field("site", o.site);
      w.field("active_bytes", o.active).field("reserved_bytes", o.reserved);
      write_stacks(w, "holders", o.holders);
      w.end_object();
    }
    w.end_array();
    w.key("timeline").begin_array();
    for (const ReplayPoint& p : d.timeline) {
      w.begin_array().value(p.index).value(p.time_us).value(p.active).value(p.reserved).end_array();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("allocator_settings").begin_object();
  for (const auto& [k, v] : r.allocator_settings) w.key(k).raw(v);
  w.end_object();
  w.field("annotations", r.annotations);
  if (r.start_time_us >= 0) w.field("start_time_us", r.start_time_us);
  w.key("recommendations").begin_array();
  for (const std::string& s : r.recommendations) w.value(s);
  w.end_array();
  w.end_object();
}

}  // namespace mlprof

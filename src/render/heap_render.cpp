#include "render/heap_render.h"

#include <cstdio>

#include "render/text_table.h"
#include "trace/units.h"

namespace mlprof {

namespace {

// Allocator entry points say nothing about who allocated: show the caller first.
bool is_allocator_frame(const std::string& f) {
  if (f.rfind("operator new", 0) == 0 || f.rfind("std::allocator", 0) == 0 ||
      f.rfind("__gnu_cxx::new_allocator", 0) == 0 || f.rfind("std::__new_allocator", 0) == 0)
    return true;
  std::string name = f.substr(0, f.find_first_of(" (@"));
  for (const char* p :
       {"malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign", "valloc"})
    if (name == p) return true;
  return false;
}

// "(anonymous namespace)::leak_site(unsigned long) (a.cpp:12)" -> "leak_site"; the innermost
// shown frame keeps its file:line.
std::string short_frame(const std::string& f, bool keep_line) {
  std::string s = f;
  for (const std::string anon : {"(anonymous namespace)::", "{anonymous}::"}) {
    for (size_t p; (p = s.find(anon)) != std::string::npos;) s.erase(p, anon.size());
  }
  std::string where;
  size_t loc = s.rfind(" (");
  if (loc != std::string::npos && s.back() == ')') {
    where = s.substr(loc);
    s.resize(loc);
  }
  size_t paren = s.find('(');
  if (paren != std::string::npos && paren > 0) s.resize(paren);
  size_t version = s.find('@');  // symbol versions: pthread_create@GLIBC_2.2.5
  if (version != std::string::npos && version > 0) s.resize(version);
  return keep_line ? s + where : s;
}

std::string stack_text(const HeapStack& s, size_t frames = 3) {
  if (s.frames.empty()) return s.stack == 0 ? "(unknown stack)" : "(empty stack)";
  size_t first = 0;
  while (first + 1 < s.frames.size() && is_allocator_frame(s.frames[first])) ++first;
  std::string out;
  for (size_t i = first; i < s.frames.size() && i < first + frames; ++i) {
    if (!out.empty()) out += " <- ";
    out += short_frame(s.frames[i], i == first);
  }
  return out;
}

std::string count_text(uint64_t n) { return std::to_string(n); }

}  // namespace

std::string render_heap_stacks_text(const std::vector<HeapStack>& stacks, size_t width) {
  TextTable t;
  t.add_column("stack (innermost first)", TextTable::Align::kLeft);
  t.add_column("bytes");
  t.add_column("blocks");
  t.add_column("avg");
  for (const HeapStack& s : stacks)
    t.add_row({stack_text(s), format_bytes(static_cast<double>(s.bytes)), count_text(s.count),
               format_bytes(s.count ? static_cast<double>(s.bytes) / s.count : 0)});
  return t.render(width);
}

std::string render_heap_text(const HeapResult& r, size_t width) {
  std::string out;
  if (r.memory_events == 0) return "Host heap: no memory events in this trace.\n";
  char line[512];
  std::snprintf(line, sizeof(line),
                "Host heap: %llu allocations (%s), %llu frees in %s (%.0f allocations/s), %llu "
                "process(es)\n",
                static_cast<unsigned long long>(r.allocations),
                format_bytes(static_cast<double>(r.bytes_allocated)).c_str(),
                static_cast<unsigned long long>(r.frees),
                format_duration_ns(static_cast<double>(r.span_ns)).c_str(),
                r.allocations_per_second, static_cast<unsigned long long>(r.processes));
  out += line;
  if (r.unmatched_frees)
    out += "  (" + std::to_string(r.unmatched_frees) +
           " frees of blocks allocated outside the trace were ignored)\n";

  std::snprintf(line, sizeof(line), "\nPeak heap: %s in %llu blocks at +%s. Stacks holding it:\n",
                format_bytes(static_cast<double>(r.peak_bytes)).c_str(),
                static_cast<unsigned long long>(r.peak_blocks),
                format_duration_ns(static_cast<double>(r.peak_offset_ns)).c_str());
  out += line;
  out += render_heap_stacks_text(r.peak_stacks, width);

  std::snprintf(line, sizeof(line),
                "\nLeaks (not freed by the end): %s in %llu blocks from %llu stacks\n",
                format_bytes(static_cast<double>(r.leaked_bytes)).c_str(),
                static_cast<unsigned long long>(r.leaked_blocks),
                static_cast<unsigned long long>(r.leak_stacks));
  out += line;
  if (!r.leaks.empty()) out += render_heap_stacks_text(r.leaks, width);

  std::snprintf(
      line, sizeof(line),
      "\nTemporary allocations (freed within %s): %llu blocks, %s (%s of all allocations)\n",
      format_duration_ns(static_cast<double>(r.temporary_ns)).c_str(),
      static_cast<unsigned long long>(r.temporary_blocks),
      format_bytes(static_cast<double>(r.temporary_bytes)).c_str(),
      format_percent(r.allocations ? static_cast<double>(r.temporary_blocks) / r.allocations : 0)
          .c_str());
  out += line;
  if (!r.temporaries.empty()) out += render_heap_stacks_text(r.temporaries, width);

  out += "\nAllocation rate over time:\n";
  TextTable t;
  t.add_column("from", TextTable::Align::kLeft);
  t.add_column("allocations");
  t.add_column("frees");
  t.add_column("allocated");
  t.add_column("allocations/s");
  t.add_column("heap at end");
  for (const HeapRateBucket& b : r.rate) {
    double secs = static_cast<double>(b.end_ns - b.begin_ns) / 1e9;
    char rate[32];
    std::snprintf(rate, sizeof(rate), "%.0f", secs > 0 ? b.allocations / secs : 0.0);
    t.add_row({"+" + format_duration_ns(static_cast<double>(b.begin_ns)), count_text(b.allocations),
               count_text(b.frees), format_bytes(static_cast<double>(b.bytes_allocated)), rate,
               format_bytes(static_cast<double>(b.heap_bytes_end))});
  }
  out += t.render(width);
  return out;
}

void write_heap_stacks_json(JsonWriter& w, const std::vector<HeapStack>& stacks) {
  w.begin_array();
  for (const HeapStack& s : stacks) {
    w.begin_object();
    w.field("stack", static_cast<uint64_t>(s.stack));
    w.field("bytes", s.bytes);
    w.field("blocks", s.count);
    w.key("pids").begin_array();
    for (int64_t p : s.pids) w.value(p);
    w.end_array();
    w.key("frames").begin_array();
    for (const auto& f : s.frames) w.value(f);
    w.end_array();
    w.end_object();
  }
  w.end_array();
}

void write_heap_json(JsonWriter& w, const HeapResult& r) {
  w.begin_object();
  w.field("memory_events", r.memory_events);
  w.field("allocations", r.allocations);
  w.field("frees", r.frees);
  w.field("bytes_allocated", r.bytes_allocated);
  w.field("unmatched_frees", r.unmatched_frees);
  w.field("processes", r.processes);
  w.field("span_ns", r.span_ns);
  w.field("allocations_per_second", r.allocations_per_second);
  w.key("peak").begin_object();
  w.field("bytes", r.peak_bytes);
  w.field("ts_ns", r.peak_ts_ns);
  w.field("offset_ns", r.peak_offset_ns);
  w.field("blocks", r.peak_blocks);
  w.key("stacks");
  write_heap_stacks_json(w, r.peak_stacks);
  w.end_object();
  w.key("leaks").begin_object();
  w.field("bytes", r.leaked_bytes);
  w.field("blocks", r.leaked_blocks);
  w.field("stack_count", r.leak_stacks);
  w.key("stacks");
  write_heap_stacks_json(w, r.leaks);
  w.end_object();
  w.key("temporaries").begin_object();
  w.field("threshold_ns", r.temporary_ns);
  w.field("blocks", r.temporary_blocks);
  w.field("bytes", r.temporary_bytes);
  w.key("stacks");
  write_heap_stacks_json(w, r.temporaries);
  w.end_object();
  w.key("rate").begin_array();
  for (const HeapRateBucket& b : r.rate) {
    w.begin_object();
    w.field("begin_ns", b.begin_ns);
    w.field("end_ns", b.end_ns);
    w.field("allocations", b.allocations);
    w.field("frees", b.frees);
    w.field("bytes_allocated", b.bytes_allocated);
    w.field("heap_bytes_end", b.heap_bytes_end);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace mlprof

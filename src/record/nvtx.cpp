// Recorder scopes as NVTX ranges (opt-in: mlprof::set_nvtx(true) or MLPROF_NVTX=1), so they show
// in Nsight Systems next to the CUDA work. NVTX3 is header-only: the calls below are no-ops until
// a tool (nsys, or anything named by NVTX_INJECTION64_PATH) is attached, and nothing links
// against CUDA. While NVTX is on, every thread's chunk limit stays null, so each scope event
// leaves the inline path for record_slow(), which calls emit_nvtx(); the inline path itself is
// unchanged.
#include <cstdio>
#include <string>
#include <vector>

#include "record/recorder_internal.h"

#if defined(MLPROF_HAVE_NVTX) && __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define MLPROF_NVTX_BUILT 1
#endif

namespace mlprof::record {

#ifdef MLPROF_NVTX_BUILT
namespace {

nvtxDomainHandle_t g_domain = nullptr;
// Ranges this thread pushed and has not popped: a pop is sent only for one of ours, so turning
// NVTX on inside an open scope never pops a range someone else pushed.
thread_local uint32_t t_depth = 0;

nvtxEventAttributes_t attributes(const char* name) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  return a;
}

void push(const char* name) {
  nvtxEventAttributes_t a = attributes(name);
  nvtxDomainRangePushEx(g_domain, &a);
  ++t_depth;
}

void pop() {
  if (t_depth == 0) return;
  --t_depth;
  nvtxDomainRangePop(g_domain);
}

void mark(const char* name) {
  nvtxEventAttributes_t a = attributes(name);
  nvtxDomainMarkEx(g_domain, &a);
}

// Interned names by id; names never change once interned, so each thread caches its copies.
const char* dynamic_name(NameId id) {
  thread_local std::vector<std::string> cache;
  thread_local std::vector<bool> known;
  if (id >= cache.size()) {
    cache.resize(id + 1);
    known.resize(id + 1, false);
  }
  if (!known[id]) {
    cache[id] = name_of(id);
    known[id] = true;
  }
  return cache[id].c_str();
}

}  // namespace

bool nvtx_init() {
  // Creating the domain makes NVTX look for a tool (NVTX_INJECTION64_PATH) once.
  if (!g_domain) g_domain = nvtxDomainCreateA("mlprof");
  return true;
}

void emit_nvtx(uint64_t data) noexcept {
  using namespace detail;
  switch (data & 0xf) {
    case kBegin:
      push(reinterpret_cast<const SourceLocation*>(data & ~uint64_t{0xf})->name);
      break;
    case kBeginName:
      push(dynamic_name(static_cast<NameId>((data >> 4) & 0xffffffffu)));
      break;
    case kEnd:
    case kEndName:
    case kStepEnd:
      pop();
      break;
    case kInstant:
      mark(reinterpret_cast<const SourceLocation*>(data & ~uint64_t{0xf})->name);
      break;
    case kInstantName:
      mark(dynamic_name(static_cast<NameId>((data >> 4) & 0xffffffffu)));
      break;
    default:
      break;
  }
}

void emit_nvtx_step(uint64_t n) noexcept {
  char name[32];
  std::snprintf(name, sizeof(name), "ProfilerStep#%llu", static_cast<unsigned long long>(n));
  push(name);
}

#else  // built without the NVTX headers: set_nvtx(true) reports it and stays off

bool nvtx_init() { return false; }
void emit_nvtx(uint64_t) noexcept {}
void emit_nvtx_step(uint64_t) noexcept {}

#endif

}  // namespace mlprof::record

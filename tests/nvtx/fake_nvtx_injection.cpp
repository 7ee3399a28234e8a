// A stand-in for Nsight Systems: an NVTX injection library (loaded by NVTX3 from
// NVTX_INJECTION64_PATH) that logs domain creation, pushes, pops and marks, so the recorder's
// NVTX emission can be tested without a GPU or a profiler. The test reads the log through
// fake_nvtx_log() (dlsym on the already loaded library).
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Log {
  std::mutex mu;
  std::vector<std::string> lines;  // "T domain NAME", "T push NAME", "T pop", "T mark NAME"
};
Log& log() {
  static Log* l = new Log();
  return *l;
}
void add(const std::string& line) {
  static std::atomic<int> threads{0};
  thread_local int thread = threads.fetch_add(1);
  Log& l = log();
  std::lock_guard<std::mutex> lock(l.mu);
  l.lines.push_back(std::to_string(thread) + " " + line);
}
std::string message(const nvtxEventAttributes_t* a) {
  if (!a || a->messageType != NVTX_MESSAGE_TYPE_ASCII || !a->message.ascii) return "?";
  return a->message.ascii;
}

int g_domain_storage;
nvtxDomainHandle_t domain_create(const char* name) {
  add(std::string("domain ") + (name ? name : ""));
  return reinterpret_cast<nvtxDomainHandle_t>(&g_domain_storage);
}
int push(nvtxDomainHandle_t, const nvtxEventAttributes_t* a) {
  add("push " + message(a));
  return 0;
}
int pop(nvtxDomainHandle_t) {
  add("pop");
  return 0;
}
void mark(nvtxDomainHandle_t, const nvtxEventAttributes_t* a) { add("mark " + message(a)); }

template <typename Fn>
void set(NvtxFunctionTable table, unsigned size, unsigned id, Fn fn) {
  if (table && id < size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!callbacks) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size)) return 0;
  set(table, size, NVTX_CBID_CORE2_DomainCreateA, &domain_create);
  set(table, size, NVTX_CBID_CORE2_DomainRangePushEx, &push);
  set(table, size, NVTX_CBID_CORE2_DomainRangePop, &pop);
  set(table, size, NVTX_CBID_CORE2_DomainMarkEx, &mark);
  return 1;
}

// The log so far, one entry per call, prefixed by the calling thread's number: "2 push NAME".
extern "C" __attribute__((visibility("default"))) std::vector<std::string>* fake_nvtx_log() {
  return &log().lines;
}

// Recording from Python on the C++ recorder (include/mlprof/mlprof.h): sessions (explicit and the
// global one), pause/resume, steps, counters, instants, thread names. The hot context manager
// is the C-level type in scope_type.cpp; these calls are rarer and go through pybind11.
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "bindings.h"
#include "errors.h"
#include "mlprof/mlprof.h"

namespace py = pybind11;

namespace mlprof::python {
namespace {

// Step labels are stored by pointer in the events: keep every label alive for the process.
const char* stable_label(const std::string& label) {
  static std::mutex mu;
  static std::set<std::string>* labels = new std::set<std::string>();
  std::lock_guard<std::mutex> lock(mu);
  return labels->insert(label).first->c_str();
}

// A recording session: an owned one, or a view of the process-wide mlprof::global().
class PySession {
 public:
  explicit PySession(SessionOptions options)
      : owned_(std::make_unique<Session>(options)), session_(owned_.get()) {}
  explicit PySession(Session* global) : session_(global) {}

  void start() {
    Status s = session_->start();
    if (!s) raise(StatusCode::kFailedPrecondition, s.message());
  }
  std::shared_ptr<TraceHandle> stop() {
    auto handle = std::make_shared<TraceHandle>();
    py::gil_scoped_release release;
    Trace t = session_->stop();
    t.meta.source = "<mlprof session>";
    handle->set = std::make_unique<AnalysisSet>(std::move(t));
    return handle;
  }
  bool running() const { return session_->running(); }
  py::dict options() const {
    const SessionOptions& o = session_->options();
    py::dict d;
    d["buffer_mb"] = o.buffer_mb;
    d["sample"] = o.sample;
    d["rss_interval_ms"] = o.rss_interval_ms;
    return d;
  }
  void set_options(size_t buffer_mb, uint32_t sample, uint32_t rss_interval_ms) {
    if (session_->running())
      raise(StatusCode::kFailedPrecondition, "cannot change a running session's options");
    SessionOptions o;
    o.buffer_mb = buffer_mb;
    o.sample = sample;
    o.rss_interval_ms = rss_interval_ms;
    session_->set_options(o);
  }

 private:
  std::unique_ptr<Session> owned_;
  Session* session_;
};

// `with mlprof.step_scope("train"):`: one step, begun and ended explicitly.
class PyStepScope {
 public:
  explicit PyStepScope(const std::string& label) : label_(stable_label(label)) {}
  PyStepScope& enter() {
    detail::step_begin(label_);
    return *this;
  }
  void exit(py::args) { detail::step_end(); }

 private:
  const char* label_;
};

}  // namespace

void bind_record(py::module_& m) {
  py::class_<PySession>(m, "Session")
      .def(py::init([](size_t buffer_mb, uint32_t sample, uint32_t rss_interval_ms) {
             SessionOptions o;
             o.buffer_mb = buffer_mb;
             o.sample = sample;
             o.rss_interval_ms = rss_interval_ms;
             return std::make_unique<PySession>(o);
           }),
           py::arg("buffer_mb") = 64, py::arg("sample") = 1, py::arg("rss_interval_ms") = 10)
      .def("start", &PySession::start)
      .def("stop", &PySession::stop)
      .def_property_readonly("running", &PySession::running)
      .def_property_readonly("options", &PySession::options)
      .def("set_options", &PySession::set_options, py::arg("buffer_mb"), py::arg("sample"),
           py::arg("rss_interval_ms"));
  m.def(
      "global_session", [] { return std::make_unique<PySession>(&global()); },
      "The process-wide session (MLPROF_ENABLED / MLPROF_OUTPUT start it at import).");
  m.def("options_from_env", [] {
    SessionOptions o = SessionOptions::from_env();
    py::dict d;
    d["buffer_mb"] = o.buffer_mb;
    d["sample"] = o.sample;
    d["rss_interval_ms"] = o.rss_interval_ms;
    return d;
  });

  m.def("set_enabled", &set_enabled, py::arg("on"));
  m.def("enabled", &enabled);
  m.def(
      "step", [](const std::string& label) { detail::step_advance(stable_label(label)); },
      py::arg("label") = "step");
  py::class_<PyStepScope>(m, "StepScope")
      .def(py::init<const std::string&>(), py::arg("label") = "step")
      .def("__enter__", &PyStepScope::enter, py::return_value_policy::reference_internal)
      .def("__exit__", &PyStepScope::exit);
  m.def(
      "counter", [](std::string_view name, double value) { counter(name, value); }, py::arg("name"),
      py::arg("value"));
  m.def(
      "instant", [](std::string_view name) { instant(name); }, py::arg("name"));
  m.def(
      "set_thread_name", [](std::string_view name) { set_thread_name(name); }, py::arg("name"));
  m.def(
      "track_alloc",
      [](uint64_t addr, size_t bytes, int device) {
        track_alloc(reinterpret_cast<const void*>(addr), bytes,
                    device < 0 ? DeviceType::kCpu : DeviceType::kCuda, device < 0 ? 0 : device);
      },
      py::arg("addr"), py::arg("bytes"), py::arg("device") = -1);
  m.def(
      "track_free", [](uint64_t addr) { track_free(reinterpret_cast<const void*>(addr)); },
      py::arg("addr"));
}

}  // namespace mlprof::python

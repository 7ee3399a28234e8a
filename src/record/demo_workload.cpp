#include "record/demo_workload.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mlprof/mlprof.h"

namespace mlprof::record {
namespace {

constexpr int kInputs = 128, kClasses = 10;
constexpr int kWidths[] = {kInputs, 128, 64, kClasses};
constexpr int kLayers = 3;

// A float buffer whose allocation and free are reported to mlprof (DeviceType::kCpu).
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t n) : n_(n), p_(static_cast<float*>(std::calloc(n, sizeof(float)))) {
    mlprof::track_alloc(p_, n * sizeof(float));
  }
  ~Buffer() { reset(); }
  Buffer(Buffer&& o) noexcept : n_(o.n_), p_(o.p_) { o.p_ = nullptr; }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      reset();
      n_ = o.n_;
      p_ = o.p_;
      o.p_ = nullptr;
    }
    return *this;
  }
  float* data() { return p_; }
  const float* data() const { return p_; }
  float& operator[](size_t i) { return p_[i]; }
  size_t size() const { return n_; }

 private:
  void reset() {
    if (p_) {
      mlprof::track_free(p_);
      std::free(p_);
      p_ = nullptr;
    }
  }
  size_t n_ = 0;
  float* p_ = nullptr;
};

// y[m x n] = x[m x k] * w[k x n] (+ b), row-major; the i-k-j order vectorizes.
void matmul(const float* x, const float* w, float* y, int m, int k, int n) {
  std::memset(y, 0, sizeof(float) * m * n);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) {
      float a = x[i * k + p];
      const float* wr = w + p * n;
      float* yr = y + i * n;
      for (int j = 0; j < n; ++j) yr[j] += a * wr[j];
    }
}

struct Layer {
  int in = 0, out = 0;
  Buffer w, b, gw, gb;
  NameId forward_name = 0, backward_name = 0;
};

struct Batch {
  Buffer x;
  std::vector<int> labels;
};

class DataLoader {
 public:
  DataLoader(int batch, uint64_t seed, int read_latency_us)
      : batch_(batch), rng_(seed), latency_(read_latency_us), centers_(kClasses * kInputs) {
    std::normal_distribution<float> n(0.f, 1.f);
    for (size_t i = 0; i < centers_.size(); ++i) centers_[i] = n(rng_);
  }

  Batch next() {
    // Named as PyTorch names its loader iterator, so the step analyzer classifies it.
    MLPROF_SCOPE_CAT("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                     "user_annotation");
    {
      MLPROF_SCOPE_CAT("read_batch", "io");
      // Stands in for a read from slow storage on the training thread (the planted problem).
      std::this_thread::sleep_for(std::chrono::microseconds(latency_));
    }
    Batch b{Buffer(static_cast<size_t>(batch_) * kInputs), std::vector<int>(batch_)};
    MLPROF_SCOPE_CAT("decode_and_augment", "cpu_op");
    std::normal_distribution<float> noise(0.f, 0.8f);
    std::uniform_int_distribution<int> cls(0, kClasses - 1);
    for (int i = 0; i < batch_; ++i) {
      int c = cls(rng_);
      b.labels[i] = c;
      for (int j = 0; j < kInputs; ++j) {
        // Per-sample "decoding + augmentation": a few smoothing passes per feature, deliberately
        // heavier than a copy (it runs on the training thread, like num_workers=0).
        float v = centers_[c * kInputs + j] + noise(rng_);
        for (int r = 0; r < 6; ++r) v = 0.5f * (v + std::tanh(v));
        b.x[static_cast<size_t>(i) * kInputs + j] = v;
      }
    }
    return b;
  }

 private:
  int batch_;
  std::mt19937_64 rng_;
  int latency_;
  std::vector<float> centers_;
};

// The model: three linear layers, He-initialized, with their scope names interned.
void init_layers(std::vector<Layer>& layers, std::mt19937_64& rng) {
  MLPROF_SCOPE_CAT("model.__init__", "user_annotation");
  for (int l = 0; l < kLayers; ++l) {
    Layer& L = layers[l];
    L.in = kWidths[l];
    L.out = kWidths[l + 1];
    L.w = Buffer(static_cast<size_t>(L.in) * L.out);
    L.b = Buffer(L.out);
    L.gw = Buffer(static_cast<size_t>(L.in) * L.out);
    L.gb = Buffer(L.out);
    std::normal_distribution<float> init(0.f, std::sqrt(2.f / L.in));
    for (size_t i = 0; i < L.w.size(); ++i) L.w[i] = init(rng);
    // Dynamic names, interned once: "fc1.forward", "fc1.backward", ...
    std::string base = "fc" + std::to_string(l + 1);
    L.forward_name = mlprof::intern(base + ".forward");
    L.backward_name = mlprof::intern(base + ".backward");
  }
}

// Forward: activations kept for the backward pass, freed at the end of the step.
std::vector<Buffer> forward(std::vector<Layer>& layers, const Batch& batch, int m,
                            NameId module_cat) {
  std::vector<Buffer> acts;
  acts.reserve(kLayers + 1);
  {
    MLPROF_SCOPE_CAT("nn.Module: MLP.forward", "user_annotation");
    const float* in = batch.x.data();
    for (int l = 0; l < kLayers; ++l) {
      Layer& L = layers[l];
      mlprof::NamedScope scope(L.forward_name, module_cat);
      Buffer y(static_cast<size_t>(m) * L.out);
      {
        MLPROF_SCOPE_CAT("aten::addmm", "cpu_op");
        matmul(in, L.w.data(), y.data(), m, L.in, L.out);
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < L.out; ++j) y[static_cast<size_t>(i) * L.out + j] += L.b[j];
      }
      if (l + 1 < kLayers) {
        MLPROF_SCOPE_CAT("aten::relu", "cpu_op");
        for (size_t i = 0; i < y.size(); ++i) y[i] = y[i] > 0 ? y[i] : 0;
      }
      acts.push_back(std::move(y));
      in = acts.back().data();
    }
  }
  return acts;
}

// Loss: softmax cross-entropy of the logits; its gradient (into grad) starts the backward pass.
double cross_entropy(const Buffer& logits_buf, const Batch& batch, int m, Buffer& grad) {
  double loss = 0;
  MLPROF_SCOPE_CAT("aten::cross_entropy_loss", "cpu_op");
  const float* logits = logits_buf.data();
  for (int i = 0; i < m; ++i) {
    const float* z = logits + i * kClasses;
    float mx = z[0];
    for (int j = 1; j < kClasses; ++j) mx = std::max(mx, z[j]);
    double sum = 0;
    for (int j = 0; j < kClasses; ++j) sum += std::exp(z[j] - mx);
    for (int j = 0; j < kClasses; ++j) {
      double p = std::exp(z[j] - mx) / sum;
      grad[static_cast<size_t>(i) * kClasses + j] =
          static_cast<float>((p - (j == batch.labels[i] ? 1.0 : 0.0)) / m);
    }
    loss -= (z[batch.labels[i]] - mx - std::log(sum)) / m;
  }
  return loss;
}

// Backward: dW = X^T dY, dX = dY W^T, through the ReLUs (grad: the loss's gradient, consumed).
void backward(std::vector<Layer>& layers, const Batch& batch, const std::vector<Buffer>& acts,
              int m, NameId module_cat, Buffer& grad) {
  MLPROF_SCOPE_CAT("autograd::engine::evaluate_function: MLPBackward", "user_annotation");
  for (int l = kLayers - 1; l >= 0; --l) {
    Layer& L = layers[l];
    mlprof::NamedScope scope(L.backward_name, module_cat);
    const float* x = l == 0 ? batch.x.data() : acts[l - 1].data();
    {
      MLPROF_SCOPE_CAT("aten::mm", "cpu_op");  // dW
      std::memset(L.gw.data(), 0, L.gw.size() * sizeof(float));
      for (int i = 0; i < m; ++i)
        for (int p = 0; p < L.in; ++p) {
          float a = x[i * L.in + p];
          float* gr = L.gw.data() + p * L.out;
          const float* g = grad.data() + i * L.out;
          for (int j = 0; j < L.out; ++j) gr[j] += a * g[j];
        }
      for (int j = 0; j < L.out; ++j) {
        float s = 0;
        for (int i = 0; i < m; ++i) s += grad[static_cast<size_t>(i) * L.out + j];
        L.gb[j] = s;
      }
    }
    if (l > 0) {
      Buffer gx(static_cast<size_t>(m) * L.in);
      MLPROF_SCOPE_CAT("aten::mm", "cpu_op");  // dX, masked by the previous ReLU
      for (int i = 0; i < m; ++i)
        for (int p = 0; p < L.in; ++p) {
          const float* wr = L.w.data() + p * L.out;
          const float* g = grad.data() + i * L.out;
          float s = 0;
          for (int j = 0; j < L.out; ++j) s += wr[j] * g[j];
          gx[static_cast<size_t>(i) * L.in + p] = x[i * L.in + p] > 0 ? s : 0;
        }
      grad = std::move(gx);
    }
  }
}

void sgd_step(std::vector<Layer>& layers, float lr) {
  MLPROF_SCOPE_CAT("Optimizer.step#SGD.step", "user_annotation");
  for (Layer& L : layers) {
    for (size_t i = 0; i < L.w.size(); ++i) L.w[i] -= lr * L.gw[i];
    for (size_t i = 0; i < L.b.size(); ++i) L.b[i] -= lr * L.gb[i];
  }
}

// The planted leak: a copy of the step's logits kept "for later logging", never freed. Returns
// the bytes leaked.
int64_t log_metrics(const Buffer& logits, std::vector<Buffer>& metrics_log) {
  MLPROF_SCOPE_CAT("log_metrics", "user_annotation");
  Buffer copy(logits.size() * 16);
  std::memcpy(copy.data(), logits.data(), logits.size() * sizeof(float));
  int64_t leaked = static_cast<int64_t>(copy.size() * sizeof(float));
  metrics_log.push_back(std::move(copy));
  return leaked;
}

}  // namespace

DemoOutcome run_demo_workload(const DemoOptions& options) {
  mlprof::set_thread_name("train");
  DemoOutcome outcome;
  std::mt19937_64 rng(options.seed + 7);
  const int m = options.batch;
  std::vector<Layer> layers(kLayers);
  init_layers(layers, rng);
  const NameId module_cat = mlprof::intern("user_annotation");
  DataLoader loader(m, options.seed, options.read_latency_us);
  std::vector<Buffer> metrics_log;  // the planted leak: grows every step, never trimmed
  const float lr = 0.05f;

  for (int step = 0; step < options.steps; ++step) {
    MLPROF_STEP("train");
    Batch batch = loader.next();
    std::vector<Buffer> acts = forward(layers, batch, m, module_cat);
    Buffer grad(static_cast<size_t>(m) * kClasses);
    double loss = cross_entropy(acts.back(), batch, m, grad);
    mlprof::counter("loss", loss);
    if (step == 0) outcome.first_loss = loss;
    outcome.last_loss = loss;
    backward(layers, batch, acts, m, module_cat, grad);
    sgd_step(layers, lr);
    outcome.leaked_bytes += log_metrics(acts.back(), metrics_log);
    outcome.steps = step + 1;
  }
  // metrics_log and the model are freed on return, after the caller stopped the session:
  // their allocations show as live at the end of the trace.
  static std::vector<Buffer>* keep = nullptr;
  delete keep;
  keep = new std::vector<Buffer>(std::move(metrics_log));
  return outcome;
}

}  // namespace mlprof::record

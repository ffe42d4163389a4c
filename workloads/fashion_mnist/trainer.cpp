#include "trainer.h"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include "common/cuda_check.h"
#include "common/device_buffer.h"

namespace fk = fuselens::kernels;

namespace fuselens::workloads::fmnist {
namespace {

class Range {
 public:
  explicit Range(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~Range() { nvtxRangePop(); }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};

struct DeviceSplit {
  fk::DeviceBuffer<std::uint8_t> pixels, labels;
  std::size_t count = 0;
  DeviceSplit(const Split& split, std::size_t limit) {
    count = limit ? std::min<std::size_t>(limit, split.images.count) : split.images.count;
    pixels = fk::DeviceBuffer<std::uint8_t>(count * kInputs);
    pixels.copy_from_host(std::span(split.images.pixels.data(), count * kInputs));
    labels = fk::DeviceBuffer<std::uint8_t>(count);
    labels.copy_from_host(std::span(split.labels.data(), count));
  }
};

}  // namespace

struct Trainer::Device {
  DeviceSplit train, test;
  fk::DeviceBuffer<std::int32_t> order, identity, batch_labels;
  fk::DeviceBuffer<float> x;
  fk::DeviceBuffer<double> loss_sum;
  fk::DeviceBuffer<unsigned long long> correct;
  Device(const Dataset& data, const TrainOptions& o)
      : train(data.train, o.train_limit), test(data.test, 0) {
    const std::size_t rows = static_cast<std::size_t>(std::max(o.batch, o.eval_batch));
    order = fk::DeviceBuffer<std::int32_t>(std::max(train.count, test.count));
    std::vector<std::int32_t> ids(order.size());
    std::iota(ids.begin(), ids.end(), 0);
    identity = fk::DeviceBuffer<std::int32_t>(ids.size());
    identity.copy_from_host(ids);
    batch_labels = fk::DeviceBuffer<std::int32_t>(rows);
    x = fk::DeviceBuffer<float>(rows * kInputs);
    loss_sum = fk::DeviceBuffer<double>(1);
    correct = fk::DeviceBuffer<unsigned long long>(1);
  }
  LossAccumulator acc() { return {loss_sum.data(), correct.data()}; }
  void reset() {
    FUSELENS_CUDA_CHECK(cudaMemsetAsync(loss_sum.data(), 0, loss_sum.bytes()));
    FUSELENS_CUDA_CHECK(cudaMemsetAsync(correct.data(), 0, correct.bytes()));
  }
  std::pair<double, unsigned long long> read() {
    double loss = 0;
    unsigned long long hits = 0;
    FUSELENS_CUDA_CHECK(cudaMemcpy(&loss, loss_sum.data(), sizeof loss, cudaMemcpyDeviceToHost));
    FUSELENS_CUDA_CHECK(cudaMemcpy(&hits, correct.data(), sizeof hits, cudaMemcpyDeviceToHost));
    return {loss, hits};
  }
  void load_batch(const DeviceSplit& split, const std::int32_t* index, int rows) {
    launch_gather_normalize(split.pixels.data(), index, x.data(), rows, kInputs, kPixelMean,
                            kPixelStd);
    launch_gather_labels(split.labels.data(), index, batch_labels.data(), rows);
  }
};

Trainer::Trainer(const Dataset& data, const TrainOptions& options) : options_(options) {
  if (options.epochs < 0 || options.batch < 1 || options.eval_batch < 1 || !(options.lr > 0)) {
    throw std::invalid_argument("Trainer: epochs >= 0, batch >= 1 and lr > 0 required");
  }
  d_ = std::make_unique<Device>(data, options);
}

Trainer::~Trainer() = default;

std::vector<EpochResult> Trainer::train(Build build,
                                        const std::function<void(const EpochResult&)>& on_epoch) {
  Device& d = *d_;
  GpuModel model(Parameters::initial(options_.seed), std::max(options_.batch, options_.eval_batch),
                 build);
  const std::string prefix = std::string("fmnist/") + to_string(build) + "/";
  std::vector<EpochResult> results;
  std::vector<std::int32_t> order(d.train.count);
  for (int epoch = 1; epoch <= options_.epochs; ++epoch) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(),
                 std::mt19937(options_.seed + static_cast<std::uint32_t>(epoch)));
    FUSELENS_CUDA_CHECK(cudaMemcpy(d.order.data(), order.data(),
                                   order.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice));
    EpochResult r;
    r.build = build;
    r.epoch = epoch;
    d.reset();
    FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
    const auto start = std::chrono::steady_clock::now();
    {
      Range range(prefix + "epoch" + std::to_string(epoch));
      for (std::size_t first = 0; first < d.train.count;
           first += static_cast<std::size_t>(options_.batch)) {
        const int rows = static_cast<int>(
            std::min<std::size_t>(static_cast<std::size_t>(options_.batch), d.train.count - first));
        d.load_batch(d.train, d.order.data() + first, rows);
        {
          Range step("forward");
          model.forward(d.x.data(), d.batch_labels.data(), rows, d.acc(), true);
        }
        {
          Range step("backward");
          model.backward(d.x.data(), rows);
        }
        {
          Range step("update");
          model.update(options_.lr, options_.momentum);
        }
        ++r.steps;
      }
      FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
    }
    r.train_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Each batch's loss kernel adds the SUM of its rows' losses: divide by the images.
    const auto [train_loss, train_hits] = d.read();
    r.train_loss = train_loss / static_cast<double>(d.train.count);
    r.train_accuracy = static_cast<double>(train_hits) / static_cast<double>(d.train.count);
    {
      Range range(prefix + "eval");
      d.reset();
      for (std::size_t first = 0; first < d.test.count;
           first += static_cast<std::size_t>(options_.eval_batch)) {
        const int rows = static_cast<int>(std::min<std::size_t>(
            static_cast<std::size_t>(options_.eval_batch), d.test.count - first));
        d.load_batch(d.test, d.identity.data() + first, rows);
        model.forward(d.x.data(), d.batch_labels.data(), rows, d.acc(), false);
      }
      const auto [test_loss, test_hits] = d.read();
      r.test_loss = test_loss / static_cast<double>(d.test.count);
      r.test_accuracy = static_cast<double>(test_hits) / static_cast<double>(d.test.count);
    }
    results.push_back(r);
    if (on_epoch) on_epoch(r);
  }
  return results;
}

std::vector<double> Trainer::fixed_batch_losses(Build build, int rows, int steps) {
  Device& d = *d_;
  if (rows < 1 || static_cast<std::size_t>(rows) > d.train.count || rows > options_.batch) {
    throw std::invalid_argument(
        "fixed_batch_losses: rows must be in [1, min(batch, training images)]");
  }
  GpuModel model(Parameters::initial(options_.seed), std::max(options_.batch, options_.eval_batch),
                 build);
  std::vector<double> losses;
  d.load_batch(d.train, d.identity.data(), rows);
  for (int s = 0; s < steps; ++s) {
    d.reset();
    model.forward(d.x.data(), d.batch_labels.data(), rows, d.acc(), true);
    model.backward(d.x.data(), rows);
    model.update(options_.lr, options_.momentum);
    losses.push_back(d.read().first / rows);
  }
  return losses;
}

}  // namespace fuselens::workloads::fmnist

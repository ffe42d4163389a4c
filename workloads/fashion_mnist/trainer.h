#pragma once
// Training and evaluation loops of the Fashion-MNIST validation on the GPU (model.h), shared by the
// fmnist_train program and the GPU tests.
//
// Data: the images and labels are copied to the device once, as bytes; each step gathers its batch
// through the epoch's permutation and normalizes it on the device (train_kernels.cuh). The
// permutation of epoch e is std::shuffle of 0..n-1 with std::mt19937(seed + e): both builds see
// the same batches in the same order. The last batch of an epoch may be smaller.
// NVTX ranges (for prof-run captures): "fmnist/<build>/epoch<e>" around each epoch's training loop,
// "fmnist/<build>/eval" around each evaluation, and per step "forward", "backward", "update".
//
// Reported per epoch: train loss and accuracy = the running mean over the epoch's batches as they
// were trained (the usual training log), test loss and accuracy after the epoch, the training
// loop's wall time (host clock, from before the first step to after a device synchronize; the
// evaluation is not included).
// Errors: fuselens::kernels::CudaError, std::invalid_argument for bad options.

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "idx.h"
#include "model.h"

namespace fuselens::workloads::fmnist {

struct TrainOptions {
  int epochs = 10;
  int batch = 64;
  float lr = 0.05f;
  float momentum = 0.9f;
  std::uint32_t seed = 1;
  std::size_t train_limit = 0;  ///< use only the first N training images (0: all)
  int eval_batch = 1000;
};

struct EpochResult {
  Build build = Build::Unfused;
  int epoch = 0;
  double train_loss = 0, train_accuracy = 0;
  double test_loss = 0, test_accuracy = 0;
  double train_seconds = 0;
  long long steps = 0;
};

/// The dataset on the device (bytes) and the loops over it.
class Trainer {
 public:
  Trainer(const Dataset& data, const TrainOptions& options);
  ~Trainer();

  /// Trains a fresh model (Parameters::initial(seed)) in `build` for options.epochs epochs, calling
  /// `on_epoch` after each.
  std::vector<EpochResult> train(Build build,
                                 const std::function<void(const EpochResult&)>& on_epoch = {});

  /// Runs `steps` training steps of the first `rows` training images (no shuffling, the same batch
  /// every step) and returns the mean loss of each step before its update: for comparisons with
  /// ReferenceModel::train_step.
  std::vector<double> fixed_batch_losses(Build build, int rows, int steps);

 private:
  struct Device;
  std::unique_ptr<Device> d_;
  TrainOptions options_;
};

}  // namespace fuselens::workloads::fmnist

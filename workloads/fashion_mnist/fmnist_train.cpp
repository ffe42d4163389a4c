// fmnist_train: trains the Fashion-MNIST network of model.h on the GPU with the unfused kernel
// chain and with the fused kernels (same seed, initial weights and batch order) and prints, per
// epoch and build, train loss / accuracy, test loss / accuracy and the training loop's time.
//
//   fmnist_train [--data DIR] [--epochs N] [--batch N] [--lr X] [--momentum X] [--seed N]
//                [--build unfused|fused|both] [--train-limit N] [--json FILE]
// Exit status: 0 done; 1 a CUDA or data error (one line); 2 bad command line; 77 no CUDA device.
#include <cuda_runtime_api.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/cuda_check.h"
#include "trainer.h"

namespace fm = fuselens::workloads::fmnist;

int main(int argc, char** argv) {
  CLI::App app{
      "Train the Fashion-MNIST network with unfused and fused kernels (FuseLens issue #10)"};
  std::string data_dir = fm::kDefaultDataDir;
  std::string build = "both";
  std::string json_path;
  fm::TrainOptions o;
  app.add_option("--data", data_dir, "directory of the IDX files (Debian's dataset-fashion-mnist)");
  app.add_option("--epochs", o.epochs, "epochs per build")->check(CLI::Range(0, 1000));
  app.add_option("--batch", o.batch, "training batch size")->check(CLI::Range(1, 65536));
  app.add_option("--lr", o.lr, "SGD learning rate")->check(CLI::PositiveNumber);
  app.add_option("--momentum", o.momentum, "SGD momentum")->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed", o.seed, "seed of the initial weights and the batch order");
  app.add_option("--build", build, "unfused, fused or both")
      ->check(CLI::IsMember({"unfused", "fused", "both"}));
  app.add_option("--train-limit", o.train_limit, "use only the first N training images (0: all)");
  app.add_option("--json", json_path, "write one JSON record per build and epoch to FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "fmnist_train: error: %s (see --help)\n", e.what());
    return 2;
  }

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "fmnist_train: no CUDA device available\n");
    return 77;
  }
  try {
    const fm::Dataset data = fm::load_dataset(data_dir);
    fm::Trainer trainer(data, o);
    std::vector<fm::Build> builds;
    if (build != "fused") builds.push_back(fm::Build::Unfused);
    if (build != "unfused") builds.push_back(fm::Build::Fused);
    nlohmann::json records = nlohmann::json::array();
    std::printf(
        "fmnist_train: %zu training images, %u test; batch %d, lr %g, momentum %g, seed %u\n",
        o.train_limit ? std::min<std::size_t>(o.train_limit, data.train.images.count)
                      : data.train.images.count,
        data.test.images.count, o.batch, static_cast<double>(o.lr), static_cast<double>(o.momentum),
        o.seed);
    std::printf("%-8s %5s %10s %9s %10s %9s %9s\n", "build", "epoch", "train_loss", "train_acc",
                "test_loss", "test_acc", "epoch_s");
    for (fm::Build b : builds) {
      trainer.train(b, [&](const fm::EpochResult& r) {
        std::printf("%-8s %5d %10.4f %8.2f%% %10.4f %8.2f%% %9.3f\n", fm::to_string(r.build),
                    r.epoch, r.train_loss, 100 * r.train_accuracy, r.test_loss,
                    100 * r.test_accuracy, r.train_seconds);
        std::fflush(stdout);
        records.push_back({{"build", fm::to_string(r.build)},
                           {"epoch", r.epoch},
                           {"train_loss", r.train_loss},
                           {"train_accuracy", r.train_accuracy},
                           {"test_loss", r.test_loss},
                           {"test_accuracy", r.test_accuracy},
                           {"train_seconds", r.train_seconds},
                           {"steps", r.steps}});
      });
    }
    if (!json_path.empty()) std::ofstream(json_path) << records.dump(1) << "\n";
  } catch (const fuselens::kernels::CudaError&) {
    return 1;  // already printed
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fmnist_train: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

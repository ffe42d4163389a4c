// Uses fuselens/annotate.h as an application would (tests/packaging/find_package_test.sh): one
// range with its work declared; without a tool attached, the NVTX calls do nothing.
#include <fuselens/annotate.h>

#include <cstdio>

int main() {
  {
    fuselens::annotate::ScopedWork work("consumer_gemm", 2.0 * 64 * 64 * 64, 3.0 * 64 * 64 * 4,
                                        fuselens::annotate::Precision::tensor);
  }
  fuselens::annotate::declare_work(1.0, 8.0);
  std::printf("consumer: declared %s work\n",
              fuselens::annotate::precision_name(fuselens::annotate::Precision::tensor));
  return 0;
}

#include <gtest/gtest.h>

#include "fuselens/db/Writer.h"

using fuselens::db::demangle;
using fuselens::db::short_kernel_name;

TEST(KernelNames, DemanglesItaniumNames) {
  EXPECT_EQ(demangle("_Z11tiny_kernelv"), "tiny_kernel()");
  EXPECT_EQ(demangle("_ZN8fuselens7kernels4gemmILi64EEEvPKfPfi"),
            "void fuselens::kernels::gemm<64>(float const*, float*, int)");
}

TEST(KernelNames, LeavesPlainNamesAlone) {
  EXPECT_EQ(demangle("my_extern_c_kernel"), "my_extern_c_kernel");
  EXPECT_EQ(demangle("_Znot_valid"), "_Znot_valid");
}

TEST(KernelNames, ShortNameDropsReturnTypeScopesTemplatesAndParameters) {
  EXPECT_EQ(short_kernel_name("void fuselens::kernels::gemm<64>(float const*, float*, int)"), "gemm");
  EXPECT_EQ(short_kernel_name("tiny_kernel()"), "tiny_kernel");
  EXPECT_EQ(short_kernel_name("my_extern_c_kernel"), "my_extern_c_kernel");
  EXPECT_EQ(short_kernel_name("void at::native::(anonymous namespace)::reduce_kernel<512, 1, "
                              "at::native::ReduceOp<float, at::native::MeanOps<float, float>>>("
                              "at::native::ReduceOp<float, at::native::MeanOps<float, float>>)"),
            "reduce_kernel");
  EXPECT_EQ(short_kernel_name("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>"
                              "(cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4::Params)"),
            "Kernel2");
}

// The device table (device_table.h), tensor/matrix-core classification by kernel family
// (kernel_class.h) and the advice chosen from them (analyze/advice.h). Expected values are the
// vendors' published facts (the sources cited in device_table.cpp), not mlprof's output.
#include "mlprof/analyze/device_table.h"

#include <gtest/gtest.h>

#include <string>

#include "analyze/advice.h"
#include "mlprof/analyze/kernel_class.h"

namespace mlprof {
namespace {

DeviceInfo dev(const char* name, int major, int minor, int warp = 32) {
  DeviceInfo d;
  d.name = name;
  d.compute_major = major;
  d.compute_minor = minor;
  d.warp_size = warp;
  return d;
}

bool has(const std::string& s, const char* p) { return s.find(p) != std::string::npos; }

TEST(DeviceTable, NvidiaByComputeCapability) {
  DeviceCaps v100 = device_caps(dev("Tesla V100-SXM2-32GB", 7, 0));
  EXPECT_EQ(v100.vendor, DeviceVendor::kNvidia);
  EXPECT_EQ(v100.arch, "sm_70");
  EXPECT_EQ(v100.sm(), 70);
  EXPECT_TRUE(v100.has(kMatFp16));
  EXPECT_FALSE(v100.has(kMatBf16));  // bf16 and TF32 arrived with Ampere (sm_80)
  EXPECT_FALSE(v100.has(kMatTf32));
  EXPECT_FALSE(v100.has(kMatFp8));
  DeviceCaps t4 = device_caps(dev("Tesla T4", 7, 5));
  EXPECT_TRUE(t4.has(kMatInt8));
  EXPECT_FALSE(t4.has(kMatBf16));
  DeviceCaps a100 = device_caps(dev("NVIDIA A100-SXM4-40GB", 8, 0));
  EXPECT_TRUE(a100.has(kMatBf16) && a100.has(kMatTf32));
  EXPECT_FALSE(a100.has(kMatFp8));  // fp8 needs sm_89
  DeviceCaps orin = device_caps(dev("Orin", 8, 7));
  EXPECT_EQ(orin.family, "Ampere (GA10x)");  // the row at or below sm_87: sm_86
  DeviceCaps l4 = device_caps(dev("NVIDIA L4", 8, 9));
  EXPECT_TRUE(l4.has(kMatFp8));
  DeviceCaps h100 = device_caps(dev("NVIDIA H100 80GB HBM3", 9, 0));
  EXPECT_TRUE(h100.has(kMatFp8));
  EXPECT_FALSE(h100.has(kMatFp4));  // fp4 is Blackwell's
  DeviceCaps b200 = device_caps(dev("NVIDIA B200", 10, 0));
  EXPECT_TRUE(b200.has(kMatFp4) && b200.has(kMatFp8));
  DeviceCaps p100 = device_caps(dev("Tesla P100-PCIE-16GB", 6, 0));
  EXPECT_TRUE(p100.matrix_unit.empty());
  EXPECT_EQ(p100.matrix_dtypes, 0u);
}

TEST(DeviceTable, AmdByGfxTarget) {
  DeviceCaps mi300 = device_caps(dev("AMD Instinct MI300X", 9, 4, 64));
  EXPECT_EQ(mi300.vendor, DeviceVendor::kAmd);
  EXPECT_EQ(mi300.arch, "gfx942");
  EXPECT_TRUE(mi300.has(kMatFp8) && mi300.has(kMatBf16));
  EXPECT_EQ(mi300.sm(), 0);  // computeMajor 9 is no CUDA compute capability
  DeviceCaps mi250 = device_caps(dev("AMD Radeon Graphics", 9, 0, 64));  // HTA's MI250 trace
  EXPECT_EQ(mi250.arch, "gfx90a");
  EXPECT_FALSE(mi250.has(kMatFp8));
  EXPECT_EQ(device_caps(dev("AMD Instinct MI100", 9, 0, 64)).arch, "gfx908");
  EXPECT_TRUE(device_caps(dev("AMD Instinct MI355X", 9, 5, 64)).has(kMatFp4));
  EXPECT_TRUE(mi300.matrix_use_measurable);
}

TEST(DeviceTable, MtiaIsNotMeasurable) {
  DeviceCaps m = device_caps(dev("ARTEMIS", 0, 0, 0));
  EXPECT_EQ(m.vendor, DeviceVendor::kMtia);
  EXPECT_FALSE(m.matrix_use_measurable);
  EXPECT_FALSE(has(advice::device_text(m), "tensor cores"));
}

TEST(DeviceTable, EveryRowCitesItsSource) {
  for (const DeviceTableRow& r : device_table()) {
    EXPECT_FALSE(r.source.empty()) << r.key;
    EXPECT_FALSE(r.family.empty()) << r.key;
  }
}

// Kernel names as the libraries print them (cuBLAS, cuBLASLt, CUTLASS, nvjet, TensorRT-LLM,
// FlashAttention; Tensile/hipBLASLt, Composable Kernel, MIOpen).
TEST(MatrixKernels, ByLibraryFamily) {
  struct Case {
    const char* name;
    bool matrix;
    bool gemm_like;
    const char* dtype;
  };
  const Case cases[] = {
      {"volta_sgemm_128x64_nn", false, true, "fp32"},
      {"volta_h884gemm_64x64_ldg8_nn", true, true, "fp16"},
      {"ampere_s16816gemm_64x64_ldg8_stages_64x5_tn", true, true, "tf32"},
      {"sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32", true, true, "bf16"},
      // cuBLAS's fp32 FFMA xmma kernel runs on the CUDA cores (51 TFLOP/s on an H100: the fp32
      // vector rate); its TF32 sibling on the tensor cores (tests/data/h100/advice/tf32_*).
      {"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_"
       "alignc4_execute_kernel__5x_cublas",
       false, true, "fp32"},
      {"sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32_warpgroupsize2x1x1_execute_"
       "segment_k_off_kernel__5x_cublas",
       true, true, "tf32"},
      {"void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>", false, true, "fp32"},
      {"nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", true, true, ""},
      {"bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32", true, true, "fp4"},
      {"bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3", true, true, "fp4"},
      {"fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128", true, true, "fp8"},
      {"void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_relu_64x64_32x6_tn_align4>", true,
       true, "tf32"},
      {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4>>", true, true, ""},
      {"Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI32x32x8x1_SN_1LDSB0", true, true, "bf16"},
      {"Cijk_Ailk_Bljk_SB_MT64x64x16_SN_AMAS3_BL1", false, true, "fp32"},
      {"igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8", true, true, "bf16"},
      {"_ZN2ck16tensor_operation6device37kernel_batched_gemm_xdlops_bwd_weight", true, true, ""},
      // Not GEMMs: vLLM's _typeConvert is no convolution; a quantize kernel is no matmul.
      {"vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(vllm::_typeConvert<c10::BFloat16>)",
       false, false, "bf16"},
      {"void vllm::scaled_fp8_quant_kernel_strided<c10::BFloat16, c10::Float8_e4m3fn>", false,
       false, "fp8"},
  };
  for (const Case& c : cases) {
    MatrixKernel k = classify_matrix_kernel(c.name);
    EXPECT_EQ(k.matrix, c.matrix) << c.name;
    EXPECT_EQ(k.gemm_like, c.gemm_like) << c.name;
    EXPECT_EQ(std::string(k.dtype), c.dtype) << c.name;
    EXPECT_EQ(uses_tensor_cores(c.name), c.matrix) << c.name;
  }
}

TEST(KernelType, CollectivesAreCommunication) {
  const char* all_reduce =
      "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*)";
  EXPECT_EQ(kernel_type(all_reduce, false), KernelType::kCommunication);
  EXPECT_EQ(kernel_type(all_reduce, true), KernelType::kComputation);  // HTA's name pattern
  EXPECT_EQ(kernel_type("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", false),
            KernelType::kCommunication);
  EXPECT_EQ(kernel_type("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>", false),
            KernelType::kCommunication);
  EXPECT_EQ(kernel_type("void cub::DeviceReduceKernel<float>", false), KernelType::kComputation);
  EXPECT_EQ(kernel_type("void warpAllReduce<float>(float*)", false), KernelType::kComputation);
  EXPECT_EQ(kernel_type("Memcpy HtoD (Pageable -> Device)", false), KernelType::kMemory);
}

advice::TensorCoreFacts fp32_gemm() {
  advice::TensorCoreFacts f;
  f.share = 0.02;
  f.non_matrix_gemm_ns = 5'000'000;
  f.op_dtype = "fp32";
  f.top_kernel = "volta_sgemm_128x64_nn";
  f.top_family = "GEMM/conv on CUDA/SIMD cores";
  return f;
}

TEST(Advice, TensorCoresFitTheDevice) {
  advice::Advice v = advice::tensor_cores(device_caps(dev("Tesla V100", 7, 0)), fp32_gemm());
  EXPECT_TRUE(has(v.text, "torch.float16")) << v.text;
  EXPECT_TRUE(has(v.text, "GradScaler")) << v.text;
  EXPECT_FALSE(has(v.text, "torch.bfloat16")) << v.text;
  EXPECT_FALSE(has(v.text, "allow_tf32")) << v.text;
  EXPECT_TRUE(has(v.why, "sm_70")) << v.why;
  EXPECT_TRUE(has(v.why, "volta_sgemm")) << v.why;
  EXPECT_TRUE(has(v.why, "fp32")) << v.why;
  advice::Advice a = advice::tensor_cores(device_caps(dev("A100", 8, 0)), fp32_gemm());
  EXPECT_TRUE(has(a.text, "torch.bfloat16") && has(a.text, "allow_tf32")) << a.text;
  EXPECT_FALSE(has(a.text, "fp8")) << a.text;
  advice::Advice h = advice::tensor_cores(device_caps(dev("H100", 9, 0)), fp32_gemm());
  EXPECT_TRUE(has(h.text, "fp8")) << h.text;
  advice::Advice m =
      advice::tensor_cores(device_caps(dev("AMD Instinct MI300X", 9, 4, 64)), fp32_gemm());
  EXPECT_TRUE(has(m.text, "matrix cores")) << m.text;
  EXPECT_FALSE(has(m.text, "allow_tf32")) << m.text;
  EXPECT_TRUE(has(m.why, "gfx942")) << m.why;
}

TEST(Advice, HotspotByOpKind) {
  DeviceCaps nv = device_caps(dev("A100", 8, 0));
  DeviceCaps mi = device_caps(dev("AMD Instinct MI300X", 9, 4, 64));
  advice::Advice c = advice::hotspot("CompiledFunctionBackward", 10'000'000, 5, 30, 1.0, nv);
  EXPECT_FALSE(has(c.text, "(torch.compile)")) << c.text;
  EXPECT_TRUE(has(c.text, "already")) << c.text;
  EXPECT_TRUE(has(c.why, "compiled")) << c.why;
  advice::Advice r = advice::hotspot("Torch-Compiled Region: 0/1", 1, 1, 30, 1.0, nv);
  EXPECT_FALSE(has(r.text, "(torch.compile)")) << r.text;
  advice::Advice b = advice::hotspot("hipMemcpyWithStream", 10'000'000, 2, 30, 0, mi);
  EXPECT_FALSE(has(b.text, "fuse")) << b.text;
  EXPECT_TRUE(has(b.text, "Pin and make it async")) << b.text;
  advice::Advice inside = advice::hotspot("aten::mm", 1, 1, 30, 0.9, nv);
  EXPECT_FALSE(has(inside.text, "(torch.compile)")) << inside.text;
  advice::Advice plain = advice::hotspot("aten::mm", 1, 1, 30, 0, nv);
  EXPECT_TRUE(has(plain.text, "(torch.compile)")) << plain.text;
  advice::Advice sync = advice::hotspot("cudaDeviceSynchronize", 1, 1, 30, 0, nv);
  EXPECT_TRUE(has(sync.text, "waits for the GPU")) << sync.text;
  // A graph launch already replays captured work: neither fusing nor compiling applies.
  for (const char* launch : {"hipGraphLaunch", "cudaGraphLaunch", "cudaGraphLaunch_v10000"}) {
    advice::Advice g = advice::hotspot(launch, 506'770, 1, 21, 0, launch[0] == 'h' ? mi : nv);
    EXPECT_FALSE(has(g.text, "fuse")) << g.text;
    EXPECT_FALSE(has(g.text, "(torch.compile)")) << g.text;
    EXPECT_TRUE(has(g.text, "replays a captured graph")) << g.text;
    EXPECT_TRUE(has(g.why, "captured CUDA/HIP graph")) << g.why;
  }
}

TEST(Advice, VendorWording) {
  DeviceCaps mi = device_caps(dev("AMD Instinct MI300X", 9, 4, 64));
  DeviceCaps mtia = device_caps(dev("ARTEMIS", 0, 0, 0));
  EXPECT_TRUE(has(advice::gpu_idle(mi, true, false, 60, 0.8, 0.6).text, "HIP graphs"));
  advice::Advice m = advice::gpu_idle(mtia, true, false, 60, 0.8, 0.6);
  EXPECT_FALSE(has(m.text, "CUDA")) << m.text;
  advice::Advice compiled =
      advice::gpu_idle(device_caps(dev("A100", 8, 0)), true, true, 60, 0.8, 0.6);
  EXPECT_FALSE(has(compiled.text, "(torch.compile)")) << compiled.text;
  EXPECT_TRUE(has(advice::communication(mi, 30, 10).why, "RCCL"));
}

}  // namespace
}  // namespace mlprof

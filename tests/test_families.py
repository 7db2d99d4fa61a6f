"""Op families: the rule table on real kernel names from the fixtures and on library naming."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from rooflint.core import families, ranking
from rooflint.core.analysis import analyze
from tests.helpers import FIXTURES, shared

# (fixture file under shared/fixtures, the kernel name or a prefix unique in that file, family).
# The family is what the kernel does, decided by reading the name, not by running the rules.
FIXTURE_NAMES = [
    (
        "ncu/actualparam-a100-ncu2021.2-details-rules.csv",
        "void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, (int)4, "
        "void at::native::templates::cuda::uniform_and_transform",
        "elementwise",
    ),
    (
        "ncu/actualparam-a100-ncu2021.2-details-rules.csv",
        "void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, (int)4, "
        "void at::native::templates::cuda::normal_and_transform",
        "elementwise",
    ),
    (
        "ncu/actualparam-a100-ncu2021.2-details-rules.csv",
        "void cutlass::Kernel<cutlass_80_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_tn_"
        "align8>(T1::Params)",
        "gemm",
    ),
    (
        "ncu/actualparam-a100-ncu2021.2-details-rules.csv",
        "void cutlass::Kernel<cutlass_80_wmma_tensorop_f16_s161616gemm_f16_16x16_128x1_tn_"
        "align8>(T1::Params)",
        "gemm",
    ),
    (
        "ncu/actualparam-a100-ncu2021.2-details-rules.csv",
        "void <unnamed>::elementwise_kernel_with_index<int, at::native::arange_cuda_out(",
        "elementwise",
    ),
    (
        "ncu/actualparam-a100-ncu2021.2-details-rules.csv",
        "void fmha_fwd_loop_kernel<FMHA_kernel_traits<(int)128, (int)32, (int)16, (int)1, (int)4, "
        "(unsigned int)8, __half>, (bool)0, (bool)0, (bool)0>(FMHA_fprop_params)",
        "attention",
    ),
    (
        "ncu/actualparam-a100-ncu2021.2-details-rules.csv",
        "void splitKreduce_kernel<(int)32, (int)16, int, __half, __half, float, __half, (bool)1, "
        "(bool)1, (bool)0>(cublasSplitKParams<T6>",
        "gemm",
    ),
    (
        "ncu/cuda-roofline-a100-ncu2022.4-details-metrics-stdout.csv",
        "void InitializeMatrix_kernel<__half, (bool)1>(T1 *, int, int, int)",
        "elementwise",
    ),
    (
        "ncu/cuda-roofline-a100-ncu2022.4-details-metrics-stdout.csv",
        "void InitializeMatrix_kernel<float, (bool)1>(T1 *, int, int, int)",
        "elementwise",
    ),
    # CUTLASS 2.x GEMM whose template arguments hold `NumericArrayConverter` (not a convolution)
    (
        "ncu/cuda-roofline-v100-ncu2022.4-details-metrics-stdout.csv",
        "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::gemm::threadblock::"
        "MmaPipelined<",
        "gemm",
    ),
    (
        "ncu/cuda-roofline-a100-ncu2022.4-details-metrics-stdout.csv",
        "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::gemm::threadblock::"
        "MmaMultistage<",
        "gemm",
    ),
    (
        "ncu/cuda-roofline-a100-ncu2022.4-details-metrics-stdout.csv",
        "ampere_s16816gemm_fp16_256x128_ldg8_stages_64x3_nn",
        "gemm",
    ),
    (
        "ncu/cuda-roofline-v100-ncu2022.4-details-metrics-stdout.csv",
        "void cutlass::Kernel<cutlass_70_tensorop_s884gemm_f16_128x128_nn_align8>(T1::Params)",
        "gemm",
    ),
    (
        "ncu/learningnote-a100-ncu2022.4plus-details-metrics-printfp.csv",
        "void randomInit<float>(T1 *, int, int, unsigned int)",
        "elementwise",
    ),
    (
        "ncu/learningnote-a100-ncu2022.4plus-details-metrics-printfp.csv",
        "void gemm_v0<float>(T1 *, T1 *, T1 *, int, int, int)",
        "gemm",
    ),
    (
        "ncu/reexport-ncu2024.2/nvtx-details-all.csv",
        "init_data_kernel(int, double *)",
        "elementwise",
    ),
    (
        "ncu/reexport-ncu2024.2/nvtx-details-all.csv",
        "daxpy_kernel(int, double, double *, double *)",
        "elementwise",
    ),
    (
        "ncu/reexport-ncu2024.2/nvtx-details-all.csv",
        "check_results_kernel(int, double, double *)",
        "other",
    ),
    (
        "ncu/reexport-ncu2024.2/nvtx-details-kernelbase-mangled.csv",
        "_Z16init_data_kerneliPd",
        "elementwise",
    ),
    (
        "ncu/reexport-ncu2024.2/nvtx-details-kernelbase-mangled.csv",
        "_Z12daxpy_kernelidPdS_",
        "elementwise",
    ),
    (
        "ncu/reexport-ncu2024.2/nvtx-details-kernelbase-mangled.csv",
        "_Z20check_results_kernelidPd",
        "other",
    ),
    (
        "ncu/reexport-ncu2024.2/rtx2080ti-sgemm-details-all-names-base.csv",
        "volta_sgemm_32x128_nn",
        "gemm",
    ),
    ("ncu/reexport-ncu2024.2/vecadd-details.csv", "VecAdd_kernel", "elementwise"),
    (
        "ncu/roofline-analysis-b200-ncu2025.x-raw.csv",
        "void cudnn::lean_reduction_kernel<0, 0, 0>(void *, float *",
        "reduction",
    ),
    (
        "ncu/roofline-analysis-b200-ncu2025.x-raw.csv",
        "cudnn_generated_fort_native_sdpa_sm100_flash_fprop_f16_knob_7_1x128x128_4x1x1_cga1x1x1_"
        "kernel0_0",
        "attention",
    ),
    (
        "ncu/xplacer-v100-aws-ncu2019.5-details-stdout.csv",
        "Kernel2(bool*,bool*,bool*,bool*,int)",
        "other",
    ),
    (
        "ncu/xplacer-v100-aws-ncu2019.5-details-stdout.csv",
        "Kernel(Node*,int*,bool*,bool*,bool*,int*,int)",
        "other",
    ),
    (
        "rocprof/omniperf2_mi100_rocprofv1_rocm602_pmc_perf.csv",
        "vecCopy(double*, double*, double*, int, int) [clone .kd]",
        "copy",
    ),
    (
        "rocprof/omniperf2_mi300x_rocprofv2_rocm620_pmc_perf.csv",
        "vecCopy(double*, double*, double*, int, int) (.kd)",
        "copy",
    ),
    (
        "rocprof/rocprofcompute31_mi350_rocprofv3_pmc_perf.csv",
        "vecCopy(double*, double*, double*, int, int)",
        "copy",
    ),
    (
        "rocprof/omniperf2_mi300a_rocprofv1_rocm621_pmc_perf.csv",
        "__omp_offloading_32_6b6b__QQmain_l18.kd",
        "other",
    ),
    ("rocprof/v1_mi100_rocm42_single_pass_results.csv", "__amd_rocclr_fillBuffer.kd", "copy"),
    ("rocprof/v1_mi200_rocm513_multipass_results.csv", "__amd_rocclr_fillBufferAligned.kd", "copy"),
    (
        "rocprof/v1_mi200_rocm513_multipass_results.csv",
        "void benchmark_func<double, 256, 8u, 64u>(double, double*) [clone .kd]",
        "other",
    ),
    (
        "rocprof/v1_mi250_rocm571_stats_mode_results.csv",
        "void laplacian_kernel<double>(double*, double const*, int, int, int, double, double, "
        "double, double) [clone .kd]",
        "other",
    ),
    (
        "rocprof/v1_mi250_rocm571_stats_mode_results.csv",
        "void check_kernel<double>(int*, double const*, int, int, int, double, double, double, "
        "double) [clone .kd]",
        "other",
    ),
    (
        "rocprof/v3_docs_2024_counter_collection.csv",
        "void addition_kernel<float>(float*, float const*, float const*, int, int)",
        "elementwise",
    ),
    (
        "rocprof/v3_docs_2024_counter_collection.csv",
        "subtract_kernel(float*, float const*, float const*, int, int)",
        "elementwise",
    ),
    (
        "rocprof/v3_docs_2024_counter_collection.csv",
        "multiply_kernel(float*, float const*, float const*, int, int)",
        "elementwise",
    ),
    (
        "rocprof/v3_docs_2025_counter_collection.csv",
        "divide_kernel(float*, float const*, float const*, int, int)",
        "elementwise",
    ),
    (
        "rocprof/v3_rocm621_mi300a_kernel_trace_head.csv",
        "__omp_offloading_32_2f3c3__QMlaplacian_modPlaplacian_l23",
        "other",
    ),
    ("rocprof/v3_rocm7x_mi300a_counter_collection_head.csv", "init_gaussian", "elementwise"),
    ("rocprof/v3_rocm7x_mi300a_counter_collection_head.csv", "apply_reflect_bc", "other"),
    ("rocprof/v3_rocm7x_mi300a_counter_collection_head.csv", "compute_rhs", "other"),
]

# Names as the libraries print them (from their profiles and sources), with the family they are.
LIBRARY_NAMES = [
    # cuBLAS / cuBLASLt
    (
        "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32_stage4_warpsize2x2x1_"
        "tensor16x8x16_kernel",
        "gemm",
    ),
    (
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
        "segment_k_off_kernel__5x_cublas",
        "gemm",
    ),
    ("volta_h884gemm_128x128_ldg8_nn", "gemm"),
    ("turing_fp16_s1688gemm_fp16_256x128_ldg8_f2f_tn", "gemm"),
    ("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", "gemm"),
    (
        "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, "
        "false, false, true, false>(cublasGemvParamsEx<int, "
        "cublasGemvTensorStridedBatched<const float>, cublasGemvTensorStridedBatched<const "
        "float>, cublasGemvTensorStridedBatched<float>, float>, float, float)",
        "gemm",
    ),
    (
        "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, "
        "__nv_bfloat16, true, false, false>(cublasLt::cublasSplitKParams<float>, const float *, "
        "const __nv_bfloat16 *, __nv_bfloat16 *)",
        "gemm",
    ),
    # CUTLASS
    (
        "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, "
        "int, int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::"
        "MainloopSm90TmaGmmaWarpSpecialized<4, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1>>, "
        "cutlass::gemm::KernelTmaWarpSpecialized>>>>(T1::Params)",
        "gemm",
    ),
    (
        "void cutlass::Kernel<cutlass_tensorop_h16816fprop_optimized_f16_128x128_32x5_nhwc_"
        "align8>(T1::Params)",
        "convolution",
    ),
    (
        "void cutlass::reference::device::kernel::BlockForEach<cutlass::half_t, "
        "cutlass::reference::device::detail::RandomUniformFunc<cutlass::half_t>>(T1 *, "
        "unsigned long, T2::Params)",
        "elementwise",
    ),
    # cuDNN
    (
        "void implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, false, false, "
        "true>(int, int, int, const T1 *, int, T1 *, const T1 *, kernel_conv_params, "
        "unsigned long long, int, T2, T2, int, const T1 *, const T1 *, bool, int, int)",
        "convolution",
    ),
    (
        "sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_"
        "stage4_warpsize2x2x1_g1_tensor16x8x16_kernel_cudnn",
        "convolution",
    ),
    (
        "sm86_xmma_dgrad_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nchw_tilesize64x32x64_"
        "stage5_warpsize2x2x1_g1_tensor16x8x16_kernel_cudnn",
        "convolution",
    ),
    (
        "void cudnn::winograd_nonfused::winogradForwardData4x4<float, "
        "float>(cudnn::winograd_nonfused::WinogradDataParams<T1, T2>)",
        "convolution",
    ),
    (
        "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct, "
        "const T1 *, cudnnTensorStruct, T1 *, const T2 *, const T2 *, T2, T2, T2 *, T2 *, T2 *, "
        "T2 *, T2, T2)",
        "normalization",
    ),
    (
        "void cudnn::ops::nchwToNhwcKernel<__half, __half, float, false, true, "
        "(cudnnKernelDataType_t)0>(cudnn::ops::nchw2nhwc_params_t<T3>, const T1 *, T2 *)",
        "copy",
    ),
    # PyTorch ATen
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
        "at::detail::Array<char *, 3>>(int, T2, T3)",
        "elementwise",
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "at::detail::Array<char *, 1>>(int, T2, T3)",
        "copy",
    ),
    (
        "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::"
        "TensorIteratorBase &)::[lambda() (instance 3)]::operator ()() const::[lambda() (instance "
        "7)]::operator ()() const::[lambda(float) (instance 1)], at::detail::Array<char *, "
        "2>>(int, T1, T2, T3, T4, T5)",
        "copy",
    ),
    (
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
        "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>>(T3)",
        "reduction",
    ),
    (
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
        "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(T4 *, const T2 *, int)",
        "softmax",
    ),
    (
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
        "T2, const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)",
        "normalization",
    ),
    (
        "void at::native::batch_norm_collect_statistics_kernel<at::native::InvStd, float, float, "
        "float, int>(at::GenericPackedTensorAccessor<const T2, 3, at::RestrictPtrTraits, T5>, T3, "
        "T3, at::GenericPackedTensorAccessor<T4, 1, at::RestrictPtrTraits, T5>)",
        "normalization",
    ),
    (
        "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 4, 64, "
        "64>(T1 *, at::native::(anonymous namespace)::CatArrInputTensorMetadata<T1, T2, 64, 64>, "
        "at::native::(anonymous namespace)::TensorSizeStride<T2, 4>, int, T2)",
        "copy",
    ),
    (
        "void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, unsigned int, "
        "2, 2, -2, true>(at::cuda::detail::TensorInfo<T1, T3>, "
        "at::cuda::detail::TensorInfo<const T1, T3>, at::cuda::detail::TensorInfo<const T2, T3>, "
        "int, int, T3, T3, long)",
        "copy",
    ),
    (
        "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, "
        "unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<const T1, T3>, "
        "at::cuda::detail::TensorInfo<T1, T3>, at::cuda::detail::TensorInfo<T6, T3>, T3, T2, "
        "at::PhiloxCudaState)",
        "elementwise",
    ),
    (
        "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, "
        "const T1 *, long, long, long, int, int, int, int, int, int, int, int, int, int, T1 *, "
        "long *)",
        "reduction",
    ),
    (
        "void at::native::upsample_bilinear2d_out_frame<float, float>(int, T2, T2, bool, "
        "at::GenericPackedTensorAccessor<const T1, 4, at::DefaultPtrTraits, long>, "
        "at::GenericPackedTensorAccessor<T1, 4, at::DefaultPtrTraits, long>)",
        "elementwise",
    ),
    (
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
        "namespace)::TensorListMetadata<4>, at::native::(anonymous "
        "namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>>(T1, T2, "
        "T3...)",
        "elementwise",
    ),
    # Triton (torch.compile / Inductor)
    ("triton_poi_fused_add_mul_0", "elementwise"),
    ("triton_poi_fused_convolution_relu_3", "elementwise"),
    ("triton_red_fused_native_layer_norm_0", "normalization"),
    ("triton_per_fused__softmax_1", "softmax"),
    ("triton_red_fused_sum_2", "reduction"),
    ("triton_tem_fused_mm_4", "gemm"),
    # FlashAttention, xFormers, vLLM, FlashInfer
    (
        "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
        "cutlass::half_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::half_t>>, false, true, "
        "false, false, true, true, false, false>(flash::Flash_fwd_params)",
        "attention",
    ),
    (
        "void flash::flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<128, 64, 128, 8, 2, "
        "4, 2, false, false, cutlass::half_t, Flash_kernel_traits<128, 64, 128, 8, "
        "cutlass::half_t>>>(flash::Flash_bwd_params)",
        "attention",
    ),
    (
        "fmha_cutlassF_f16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::"
        "AttentionKernel<cutlass::half_t, cutlass::arch::Sm80, true, 64, 128, 128, true, "
        "true>::Params)",
        "attention",
    ),
    (
        "void vllm::paged_attention_v2_kernel<unsigned short, unsigned short, 128, 16, 128, "
        "(vllm::Fp8KVCacheDataType)0, false, 512>(float *, float *, T1 *, const T1 *, const T2 *, "
        "const T2 *, int, float, const int *, const int *, int, const float *, int, int, int, "
        "int, float, float, int)",
        "attention",
    ),
    (
        "void vllm::rms_norm_kernel<c10::BFloat16>(T1 *, const T1 *, const T1 *, float, int, int)",
        "normalization",
    ),
    (
        "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(const long *, T1 *, T1 *, "
        "const T1 *, int, long, long, int, int, int)",
        "elementwise",
    ),
    (
        "void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, "
        "false>(T1 *, const T1 *, int)",
        "elementwise",
    ),
    (
        "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData *, "
        "vllm::RankSignals, vllm::Signal *, __nv_bfloat16 *, int, int)",
        "communication",
    ),
    # hipBLASLt / rocBLAS (Tensile), Composable Kernel, MIOpen
    (
        "Cijk_Ailk_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs_MT128x128x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_"
        "AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_"
        "K1_LBSPPA128_LBSPPB128_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV1_MIWT4_4_MO40_NTn1_"
        "NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_"
        "SSO0_SVW8_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA4_VWB4_WSGRA0_WSGRB0_"
        "WS64_WG32_8_1",
        "gemm",
    ),
    (
        "Cijk_Alik_Bljk_SB_MT64x64x8_SE_1LDSB0_APM1_AF0EM8_AF1EM1_AMAS3_ASE_ASGT_ASLT_ASAE01_"
        "ASCE01_ASEM8_AAC0_BL1_BS1_DTL0_DTVA0_DTVB0_DVO0_ETSP_EPS1_FL0_GRPM1_GRVW1_GSU1_GSUASB_"
        "GLS0_ISA000_IU1_K1_KLA_LBSPPA0_LBSPPB0_LPA0_LPB0_LDL1_LRVW1_LWPMn1_LDW0_FMA_MIAV0_MDA2_"
        "MO40_NTA0_NTB0_NTC0_NTD0_NEPBS0_NLCA1_NLCB1_ONLL1_OPLV0_PK0_PAP0_PGR1_PLR1_SIA1_SS0_SU32_"
        "SUM0_SUS256_SCIUI1_SPO0_SRVW0_SSO0_SVW4_SNLL0_TT4_4_TLDS0_USFGROn1_VAW1_VS1_VW1_WSGRA0_"
        "WSGRB0_WS64_WG16_16_1_WGM8",
        "gemm",
    ),
    (
        "void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<ck::tensor_layout::"
        "gemm::RowMajor, ck::tensor_layout::gemm::ColumnMajor, ck::tensor_layout::gemm::RowMajor, "
        "_Float16, _Float16, _Float16, float>, true, (ck::InMemoryDataOperationEnum)0, 1, "
        "(ck::TailNumber)0>(ck::GridwiseGemm_xdl_cshuffle_v3::Argument)",
        "gemm",
    ),
    (
        "void ck::kernel_batched_gemm_softmax_gemm_xdl_cshuffle_v1<ck::"
        "GridwiseBatchedGemmSoftmaxGemm_Xdl_CShuffle<_Float16, float, "
        "_Float16>>(const _Float16 *, const _Float16 *, const _Float16 *, _Float16 *)",
        "attention",
    ),
    ("naive_conv_fwd_nchw_float_double_float", "convolution"),
    (
        "igemm_fwd_gtcx_nhwc_fp16_bx0_ex1_bt256x128x32_wt32x32x8_ws2x1_wr2x2_ta1x8x2x1_1x4x1x64_"
        "tb1x8x1x1_1x4x1x64",
        "convolution",
    ),
    ("miopenSp3AsmConv_v21_1_3_gfx9_fp32_f2x3_stride1", "convolution"),
    ("MIOpenBatchNormFwdTrainSpatial", "normalization"),
    # NCCL / RCCL
    (
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm *, unsigned long, ncclWork *)",
        "communication",
    ),
    (
        "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm *, unsigned long, ncclWork *)",
        "communication",
    ),
    ("ncclDevKernel_SendRecv(ncclDevComm *, unsigned long, ncclWork *)", "communication"),
    (
        "ncclKernel_Broadcast_RING_SIMPLE_Sum_int8_t(ncclDevComm *, unsigned long, ncclWork *)",
        "communication",
    ),
    # runtime copies (HIP runtime kernels, CUDA copy/memset activities)
    ("__amd_rocclr_copyBuffer.kd", "copy"),
    ("[CUDA memcpy HtoD]", "copy"),
    ("[CUDA memset]", "copy"),
]


def _kernel_names(path) -> set[str]:
    """Every cell of the kernel-name column(s) of a CSV fixture (ncu or rocprof)."""
    names: set[str] = set()
    header = None
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        for row in csv.reader(fh):
            if header is None:
                wanted = [
                    i
                    for i, h in enumerate(row)
                    if h in ("Kernel Name", "KernelName", "Kernel_Name")
                ]
                if wanted:
                    header = wanted
                continue
            names.update(row[i] for i in header if i < len(row))
    return names


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("fixture", "name", "family"),
    FIXTURE_NAMES,
    ids=[f"{f.split('/')[-1][:24]}:{n[:40]}" for f, n, _ in FIXTURE_NAMES],
)
def test_fixture_kernel_names(fixture, name, family):
    matches = sorted(n for n in _kernel_names(shared(fixture)) if n.startswith(name))
    assert len(matches) == 1, f"{name!r} names {len(matches)} kernels in {fixture}"
    assert families.classify_one(matches[0]) == family


def test_enough_distinct_real_names():
    assert len({name for _, name, _ in FIXTURE_NAMES}) >= 40


@pytest.mark.parametrize(("name", "family"), LIBRARY_NAMES, ids=[n[:50] for n, _ in LIBRARY_NAMES])
def test_library_kernel_names(name, family):
    assert families.classify_one(name) == family


def test_every_family_is_reachable_and_rules_name_known_families():
    reached = {f for _, _, f in FIXTURE_NAMES} | {f for _, f in LIBRARY_NAMES}
    assert reached == set(families.FAMILIES)
    assert {family for family, _ in families.RULES} <= set(families.FAMILIES)


@pytest.mark.parametrize(
    ("name", "not_family"),
    [
        ("void cutlass::NumericArrayConverter_kernel<float>", "convolution"),  # convert is not conv
        (
            "void broadcast_add_kernel<float>(float *, const float *, int)",
            "copy",
        ),  # broadcast is not cast
        (
            "void at::native::std_var_kernel<std::tuple<float, float>>(T1)",
            "reduction",
        ),  # `std::` is no statistic
    ],
)
def test_short_words_inside_longer_words_do_not_match(name, not_family):
    assert families.classify_one(name) != not_family


@pytest.mark.parametrize(
    ("name", "family"),
    [
        # `all_reduce` sits inside `small_reduce`: the issue-12 case, a reduction, not a collective
        ("void small_reduce_kernel<float, 256>(float const*, float*, int)", "reduction"),
        ("small_reduce_sum_kernel", "reduction"),
        ("install_gather_indices", "copy"),  # `all_gather` inside `install_gather`
        # collectives that start a word: after `_`, `::`, or a camelCase hump
        (
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            "communication",
        ),
        ("void vllm::cross_device_reduce_1stage<float, 8>(...)", "communication"),
        ("void customAllReduce_kernel<half>(...)", "communication"),
        ("all_gather_into_tensor_kernel", "communication"),
        ("void reduce_scatter_kernel<float>(...)", "communication"),
    ],
)
def test_collective_names_must_start_a_word(name, family):
    assert families.classify_one(name) == family


def test_classify_maps_each_distinct_name_and_keeps_missing_as_other():
    names = pd.Series(
        ["volta_sgemm_32x128_nn", None, "volta_sgemm_32x128_nn", "vecCopy(double*)"], dtype="string"
    )
    assert families.classify(names).tolist() == ["gemm", "other", "gemm", "copy"]


def test_bundled_fixture_families_in_a_report():
    from rooflint import pipeline

    res = pipeline.build([str(FIXTURES / "ncu" / "a100-gemm-details.csv")])
    by_family = res.launches.groupby("family")["kernel"].agg(lambda s: sorted(set(s)))
    assert set(by_family.index) == {"gemm", "elementwise"}
    assert all("InitializeMatrix" in k for k in by_family["elementwise"])


def _launches() -> pd.DataFrame:
    """Four launches on a device with a 100 op/s FP32 peak and 10 byte/s DRAM: exact roofline
    numbers."""
    from rooflint.core import schema

    frame = pd.DataFrame(
        {
            "source": ["a.csv", "a.csv", "b.csv", "b.csv"],
            "kernel": ["sgemm_a", "sgemm_b", "vec_add", "memcpy_x"],
            "grid": ["(1, 1, 1)"] * 4,
            "block": ["(32, 1, 1)"] * 4,
            "range": ["fwd", "bwd", "fwd", None],
            "duration_s": [10.0, 4.0, 2.0, 1.0],
            "ops_vector_fp32": [500.0, 100.0, 1.0, 0.0],
            "bytes_dram": [10.0, 10.0, 10.0, 5.0],
        }
    )
    return schema.conform(frame)


class _Device:
    id = "toy"
    compute = {"vector_fp32": 100.0}
    memory = {"dram": 10.0}


@pytest.mark.parametrize("group_by", list(ranking.GROUPINGS))
def test_every_grouping_ranks_by_headroom_with_time_share(group_by):
    launches = analyze(_launches(), _Device())
    launches["family"] = families.classify(launches["kernel"])
    ranked = ranking.rank(launches, group_by)
    # bound times: sgemm_a max(5, 1)=5, sgemm_b max(1, 1)=1, vec_add max(0.01, 1)=1,
    #              memcpy max(0, .5)=.5
    # headroom:   5, 3, 1, 0.5 seconds; total time 17 s
    headroom = ranked["headroom_s"].tolist()
    assert headroom == sorted(headroom, reverse=True)
    assert ranked["rank"].tolist() == list(range(1, len(ranked) + 1))
    assert ranked["time_share"].sum() == pytest.approx(1.0)
    assert ranked["headroom_s"].sum() == pytest.approx(9.5)
    expected_first = {
        "kernel": ("sgemm_a (1, 1, 1) (32, 1, 1)", 5.0, 10 / 17),
        "name": ("sgemm_a", 5.0, 10 / 17),
        "family": ("gemm", 8.0, 14 / 17),
        "range": ("fwd", 6.0, 12 / 17),
        "source": ("a.csv", 8.0, 14 / 17),
        # no PyTorch trace here: no operator or module, one group of everything
        "op": ("(none) (none) (none)", 9.5, 1.0),
        "module": ("(none)", 9.5, 1.0),
        # no distributed job: every launch rank "(none)", then kernels as by "kernel"
        "rank": ("(none) sgemm_a (1, 1, 1) (32, 1, 1)", 5.0, 10 / 17),
    }[group_by]
    assert ranked.loc[0, "group"] == expected_first[0]
    assert ranked.loc[0, "headroom_s"] == pytest.approx(expected_first[1])
    assert ranked.loc[0, "time_share"] == pytest.approx(expected_first[2])

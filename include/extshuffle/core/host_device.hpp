// One macro marks the core functions that CUDA kernels call, so the same
// source is the single definition of the permutation on the CPU and the GPU.
#pragma once

#if defined(__CUDACC__)
#define EXTSHUFFLE_HOST_DEVICE __host__ __device__
#else
#define EXTSHUFFLE_HOST_DEVICE
#endif

// The batch evaluators of VariablePhilox for the CPU back end. Each restates
// core::VariablePhilox::round (Listing 1) in its own arithmetic, as vector
// code must; tests/device/variable_philox_batch_test.cpp holds every one that
// this CPU runs to core, exhaustively at small widths and sampled up to 62.
#include "variable_philox_batch.hpp"

// GCC 12's AVX-512 headers build masked intrinsics on _mm512_undefined, which
// -Wmaybe-uninitialized reports inside the header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdlib>
#include <cstring>

namespace extshuffle::device::cpu {
namespace {

constexpr std::uint32_t kM0Low = static_cast<std::uint32_t>(core::VariablePhilox::kM0);
constexpr std::uint32_t kM0High = static_cast<std::uint32_t>(core::VariablePhilox::kM0 >> 32);

// Splits the inputs first + j into the Feistel halves of Listing 1.
void split_halves(const core::VariablePhilox& f, std::uint64_t first, std::uint32_t count,
                  std::uint32_t* state0, std::uint32_t* state1) {
  const std::uint32_t right_bits = f.right_bits();
  const std::uint32_t right_mask = f.right_mask();
  for (std::uint32_t j = 0; j < count; ++j) {
    const std::uint64_t value = first + j;
    state0[j] = static_cast<std::uint32_t>(value >> right_bits);
    state1[j] = static_cast<std::uint32_t>(value) & right_mask;
  }
}

void join_halves(const core::VariablePhilox& f, std::uint32_t count, const std::uint32_t* state0,
                 const std::uint32_t* state1, std::uint64_t* values) {
  const std::uint32_t right_bits = f.right_bits();
  for (std::uint32_t j = 0; j < count; ++j) values[j] = (std::uint64_t{state0[j]} << right_bits) | state1[j];
}

// Listing 1 over lanes. The 64x32-bit product M0 * state0 gives
// hi = high word of (M0_low * state0) + M0_high * state0 and lo = its low word.
void rounds_portable(const core::VariablePhilox& f, std::uint32_t count, std::uint32_t* state0,
                     std::uint32_t* state1) {
  const std::uint32_t left_bits = f.left_bits();
  const std::uint32_t odd_shift = f.right_bits() - f.left_bits();
  const std::uint32_t left_mask = f.left_mask();
  const std::uint32_t right_mask = f.right_mask();
  for (int i = 0; i < f.rounds(); ++i) {
    const std::uint32_t key = f.key(i);
    for (std::uint32_t j = 0; j < count; ++j) {
      const std::uint64_t low_product = std::uint64_t{kM0Low} * state0[j];
      const std::uint32_t hi = static_cast<std::uint32_t>(low_product >> 32) + kM0High * state0[j];
      std::uint32_t lo = static_cast<std::uint32_t>(low_product);
      lo = (lo << odd_shift) | (state1[j] >> left_bits);
      state0[j] = ((hi ^ key) ^ state1[j]) & left_mask;
      state1[j] = lo & right_mask;
    }
  }
}

// Each round is a chain of ~13 cycles of latency (vpmulld), so the vector
// versions interleave kInterleave independent vectors per round.
constexpr int kInterleave = 8;

// The same with 16 lanes of AVX-512: vpmuludq forms the 64-bit products of
// the even and the odd lanes, blends put their words back in lane order.
__attribute__((target("avx512f"))) void rounds_avx512(const core::VariablePhilox& f, std::uint32_t count,
                                                      std::uint32_t* state0, std::uint32_t* state1) {
  const __m512i m0_low = _mm512_set1_epi32(static_cast<int>(kM0Low));
  const __m512i m0_high = _mm512_set1_epi32(static_cast<int>(kM0High));
  const __m128i left_shift = _mm_cvtsi32_si128(static_cast<int>(f.left_bits()));
  const __m128i odd_shift = _mm_cvtsi32_si128(static_cast<int>(f.right_bits() - f.left_bits()));
  const __m512i left_mask = _mm512_set1_epi32(static_cast<int>(f.left_mask()));
  const __m512i right_mask = _mm512_set1_epi32(static_cast<int>(f.right_mask()));
  const int rounds = f.rounds();
  constexpr std::uint32_t kStep = 16 * kInterleave;
  for (std::uint32_t j = 0; j < count; j += kStep) {
    __m512i s0[kInterleave], s1[kInterleave];
#pragma GCC unroll 8
    for (int v = 0; v < kInterleave; ++v) {
      s0[v] = _mm512_loadu_si512(state0 + j + 16 * v);
      s1[v] = _mm512_loadu_si512(state1 + j + 16 * v);
    }
    for (int i = 0; i < rounds; ++i) {
      const __m512i key = _mm512_set1_epi32(static_cast<int>(f.key(i)));
#pragma GCC unroll 8
      for (int v = 0; v < kInterleave; ++v) {
        const __m512i even = _mm512_mul_epu32(s0[v], m0_low);
        const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(s0[v], 32), m0_low);
        const __m512i lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
        const __m512i hi = _mm512_add_epi32(_mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd),
                                            _mm512_mullo_epi32(s0[v], m0_high));
        const __m512i mixed = _mm512_or_si512(_mm512_sll_epi32(lo, odd_shift), _mm512_srl_epi32(s1[v], left_shift));
        s0[v] = _mm512_and_si512(_mm512_xor_si512(_mm512_xor_si512(hi, key), s1[v]), left_mask);
        s1[v] = _mm512_and_si512(mixed, right_mask);
      }
    }
#pragma GCC unroll 8
    for (int v = 0; v < kInterleave; ++v) {
      _mm512_storeu_si512(state0 + j + 16 * v, s0[v]);
      _mm512_storeu_si512(state1 + j + 16 * v, s1[v]);
    }
  }
}

__attribute__((target("avx2"))) void rounds_avx2(const core::VariablePhilox& f, std::uint32_t count,
                                                 std::uint32_t* state0, std::uint32_t* state1) {
  const __m256i m0_low = _mm256_set1_epi32(static_cast<int>(kM0Low));
  const __m256i m0_high = _mm256_set1_epi32(static_cast<int>(kM0High));
  const __m128i left_shift = _mm_cvtsi32_si128(static_cast<int>(f.left_bits()));
  const __m128i odd_shift = _mm_cvtsi32_si128(static_cast<int>(f.right_bits() - f.left_bits()));
  const __m256i left_mask = _mm256_set1_epi32(static_cast<int>(f.left_mask()));
  const __m256i right_mask = _mm256_set1_epi32(static_cast<int>(f.right_mask()));
  const int rounds = f.rounds();
  constexpr int kVectors = kInterleave / 2;  // 16 ymm registers: fewer chains
  constexpr std::uint32_t kStep = 8 * kVectors;
  for (std::uint32_t j = 0; j < count; j += kStep) {
    __m256i s0[kVectors], s1[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      s0[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state0 + j + 8 * v));
      s1[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state1 + j + 8 * v));
    }
    for (int i = 0; i < rounds; ++i) {
      const __m256i key = _mm256_set1_epi32(static_cast<int>(f.key(i)));
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) {
        const __m256i even = _mm256_mul_epu32(s0[v], m0_low);
        const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(s0[v], 32), m0_low);
        const __m256i lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
        const __m256i hi = _mm256_add_epi32(_mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA),
                                            _mm256_mullo_epi32(s0[v], m0_high));
        const __m256i mixed = _mm256_or_si256(_mm256_sll_epi32(lo, odd_shift), _mm256_srl_epi32(s1[v], left_shift));
        s0[v] = _mm256_and_si256(_mm256_xor_si256(_mm256_xor_si256(hi, key), s1[v]), left_mask);
        s1[v] = _mm256_and_si256(mixed, right_mask);
      }
    }
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(state0 + j + 8 * v), s0[v]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(state1 + j + 8 * v), s1[v]);
    }
  }
}

using RoundsFunction = void (*)(const core::VariablePhilox&, std::uint32_t, std::uint32_t*, std::uint32_t*);

RoundsFunction kernel_function(PhiloxKernel kernel) {
  switch (kernel) {
    case PhiloxKernel::kAvx512: return rounds_avx512;
    case PhiloxKernel::kAvx2: return rounds_avx2;
    default: return rounds_portable;
  }
}

// Chosen once at run time, so the shipped binary runs on any x86-64.
// EXTSHUFFLE_CPU_KERNEL=portable|avx2 forces a narrower one (benchmarks).
RoundsFunction pick_rounds() {
  PhiloxKernel best = kernel_supported(PhiloxKernel::kAvx512) ? PhiloxKernel::kAvx512
                      : kernel_supported(PhiloxKernel::kAvx2) ? PhiloxKernel::kAvx2
                                                              : PhiloxKernel::kPortable;
  if (const char* forced = std::getenv("EXTSHUFFLE_CPU_KERNEL")) {
    if (std::strcmp(forced, "portable") == 0) best = PhiloxKernel::kPortable;
    if (std::strcmp(forced, "avx2") == 0 && kernel_supported(PhiloxKernel::kAvx2)) best = PhiloxKernel::kAvx2;
  }
  return kernel_function(best);
}

const RoundsFunction g_rounds = pick_rounds();

void evaluate_with(RoundsFunction rounds, const core::VariablePhilox& f, std::uint64_t first, std::uint32_t count,
                   std::uint64_t* values) {
  // Lanes past `count` are computed on padding and never read.
  constexpr std::uint32_t kPad = 16 * kInterleave;
  alignas(64) std::uint32_t state0[kPhiloxBatch + kPad];
  alignas(64) std::uint32_t state1[kPhiloxBatch + kPad];
  const std::uint32_t padded = (count + kPad - 1) / kPad * kPad;
  split_halves(f, first, padded, state0, state1);
  rounds(f, padded, state0, state1);
  join_halves(f, count, state0, state1, values);
}

}  // namespace

bool kernel_supported(PhiloxKernel kernel) {
  __builtin_cpu_init();
  switch (kernel) {
    case PhiloxKernel::kAvx512: return __builtin_cpu_supports("avx512f");
    case PhiloxKernel::kAvx2: return __builtin_cpu_supports("avx2");
    default: return true;
  }
}

void evaluate_variable_philox(const core::VariablePhilox& f, std::uint64_t first, std::uint32_t count,
                              std::uint64_t* values) {
  evaluate_with(g_rounds, f, first, count, values);
}

void evaluate_variable_philox(const core::VariablePhilox& f, std::uint64_t first, std::uint32_t count,
                              std::uint64_t* values, PhiloxKernel kernel) {
  evaluate_with(kernel_function(kernel), f, first, count, values);
}

}  // namespace extshuffle::device::cpu

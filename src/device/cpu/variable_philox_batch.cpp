// The batch evaluator of VariablePhilox for the CPU back end, in Highway
// (libhwy): compiled once for each x86 target Highway knows (SSSE3, SSE4,
// AVX2, AVX-512 and the portable EMU128), the best one the CPU at hand runs
// chosen at the first call (HWY_DYNAMIC_DISPATCH), so the shipped binary runs
// on any x86-64. It restates core::VariablePhilox::round (Listing 1) in lane
// arithmetic, as vector code must; tests/device/variable_philox_batch_test.cpp
// holds every target this CPU runs to core, exhaustively at small widths and
// sampled up to 62.
#include "device/cpu/variable_philox_batch.hpp"

#include <cstdlib>
#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "device/cpu/variable_philox_batch.cpp"
#include <hwy/foreach_target.h>  // re-includes this file once per target
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace extshuffle::device::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One Feistel round of Listing 1 over the lanes of (s0, s1). The 64x32-bit
// product M0 * s0 gives hi = high word of (M0_low * s0) + M0_high * s0 and
// lo = its low word; MulEven forms the 64-bit products of the even lanes,
// of the odd lanes once shifted down, and OddEven puts their words back in
// lane order.
template <class D, class V>
HWY_INLINE void philox_round(D d, V key, V m0_low, V m0_high, int left_bits, int odd_shift, V left_mask,
                             V right_mask, V& s0, V& s1) {
  const hn::Repartition<std::uint64_t, D> d64;
  const auto even = hn::MulEven(s0, m0_low);
  const auto odd = hn::MulEven(hn::BitCast(d, hn::ShiftRight<32>(hn::BitCast(d64, s0))), m0_low);
  const V lo = hn::OddEven(hn::BitCast(d, hn::ShiftLeft<32>(odd)), hn::BitCast(d, even));
  const V hi = hn::Add(hn::OddEven(hn::BitCast(d, odd), hn::BitCast(d, hn::ShiftRight<32>(even))),
                       hn::Mul(s0, m0_high));
  const V mixed = hn::Or(hn::ShiftLeftSame(lo, odd_shift), hn::ShiftRightSame(s1, left_bits));
  s0 = hn::And(hn::Xor(hn::Xor(hi, key), s1), left_mask);
  s1 = hn::And(mixed, right_mask);
}

#if HWY_TARGET == HWY_SCALAR
// One lane cannot hold a 64-bit product of 32-bit lanes: core's round itself.
void philox_rounds(const core::VariablePhilox& f, std::uint32_t count, std::uint32_t* state0,
                   std::uint32_t* state1) {
  const core::VariablePhilox::Halves h = f.halves();
  for (std::uint32_t j = 0; j < count; ++j) {
    for (int i = 0; i < f.rounds(); ++i) core::VariablePhilox::round(h, f.key(i), state0[j], state1[j]);
  }
}
std::uint32_t philox_lane_step() { return 1; }
#else
// All rounds over `count` lanes (a multiple of philox_lane_step()). A round is
// a chain of ~13 cycles of latency (the multiplies), so four independent
// vectors go through each round together.
void philox_rounds(const core::VariablePhilox& f, std::uint32_t count, std::uint32_t* state0,
                   std::uint32_t* state1) {
  const hn::ScalableTag<std::uint32_t> d;
  using V = hn::Vec<decltype(d)>;
  const V m0_low = hn::Set(d, static_cast<std::uint32_t>(core::VariablePhilox::kM0));
  const V m0_high = hn::Set(d, static_cast<std::uint32_t>(core::VariablePhilox::kM0 >> 32));
  const V left_mask = hn::Set(d, f.left_mask());
  const V right_mask = hn::Set(d, f.right_mask());
  const auto left_bits = static_cast<int>(f.left_bits());
  const auto odd_shift = static_cast<int>(f.right_bits() - f.left_bits());
  const std::size_t lanes = hn::Lanes(d);
  for (std::size_t j = 0; j < count; j += 4 * lanes) {
    std::uint32_t* a = state0 + j;
    std::uint32_t* b = state1 + j;
    V a0 = hn::LoadU(d, a), a1 = hn::LoadU(d, a + lanes), a2 = hn::LoadU(d, a + 2 * lanes),
      a3 = hn::LoadU(d, a + 3 * lanes);
    V b0 = hn::LoadU(d, b), b1 = hn::LoadU(d, b + lanes), b2 = hn::LoadU(d, b + 2 * lanes),
      b3 = hn::LoadU(d, b + 3 * lanes);
    for (int i = 0; i < f.rounds(); ++i) {
      const V key = hn::Set(d, f.key(i));
      philox_round(d, key, m0_low, m0_high, left_bits, odd_shift, left_mask, right_mask, a0, b0);
      philox_round(d, key, m0_low, m0_high, left_bits, odd_shift, left_mask, right_mask, a1, b1);
      philox_round(d, key, m0_low, m0_high, left_bits, odd_shift, left_mask, right_mask, a2, b2);
      philox_round(d, key, m0_low, m0_high, left_bits, odd_shift, left_mask, right_mask, a3, b3);
    }
    hn::StoreU(a0, d, a), hn::StoreU(a1, d, a + lanes), hn::StoreU(a2, d, a + 2 * lanes),
        hn::StoreU(a3, d, a + 3 * lanes);
    hn::StoreU(b0, d, b), hn::StoreU(b1, d, b + lanes), hn::StoreU(b2, d, b + 2 * lanes),
        hn::StoreU(b3, d, b + 3 * lanes);
  }
}

// The lanes one step of philox_rounds takes (the padding a batch needs).
std::uint32_t philox_lane_step() {
  return static_cast<std::uint32_t>(4 * hn::Lanes(hn::ScalableTag<std::uint32_t>()));
}
#endif  // HWY_TARGET == HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace extshuffle::device::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace extshuffle::device::cpu {

HWY_EXPORT(philox_rounds);
HWY_EXPORT(philox_lane_step);

namespace {

// Padding for the widest step of any target: 4 vectors of 16 lanes on
// AVX-512, 4 of 64 on a 2048-bit SVE or RVV vector.
constexpr std::uint32_t kMaxLaneStep = 256;

// The halves of point(j) for j < count.
template <class Point>
void split_halves(const core::VariablePhilox& f, Point point, std::uint32_t count, std::uint32_t* state0,
                  std::uint32_t* state1) {
  const std::uint32_t right_bits = f.right_bits();
  const std::uint32_t right_mask = f.right_mask();
  for (std::uint32_t j = 0; j < count; ++j) {
    const std::uint64_t value = point(j);
    state0[j] = static_cast<std::uint32_t>(value >> right_bits);
    state1[j] = static_cast<std::uint32_t>(value) & right_mask;
  }
}

void join_halves(const core::VariablePhilox& f, std::uint32_t count, const std::uint32_t* state0,
                 const std::uint32_t* state1, std::uint64_t* values) {
  const std::uint32_t right_bits = f.right_bits();
  for (std::uint32_t j = 0; j < count; ++j) values[j] = (std::uint64_t{state0[j]} << right_bits) | state1[j];
}

// EXTSHUFFLE_CPU_KERNEL=portable|avx2 narrows the choice (benchmarks of
// the kernels against each other). Runs before main, after libhwy's own
// initialisation (a shared library is initialised before its users).
const bool g_targets_narrowed = [] {
  const char* forced = std::getenv("EXTSHUFFLE_CPU_KERNEL");
  if (forced == nullptr) return false;
  if (std::strcmp(forced, "portable") == 0) {
    hwy::DisableTargets(~static_cast<std::int64_t>(HWY_EMU128 | HWY_SCALAR));
    return true;
  }
  if (std::strcmp(forced, "avx2") == 0) {
    hwy::DisableTargets(HWY_AVX3 | HWY_AVX3_DL);
    return true;
  }
  return false;
}();

}  // namespace

void evaluate_variable_philox(const core::VariablePhilox& f, std::uint64_t first, std::uint32_t count,
                              std::uint64_t* values) {
  // Lanes past `count` are computed on padding and never read.
  alignas(64) std::uint32_t state0[kPhiloxBatch + kMaxLaneStep];
  alignas(64) std::uint32_t state1[kPhiloxBatch + kMaxLaneStep];
  const std::uint32_t step = HWY_DYNAMIC_DISPATCH(philox_lane_step)();
  const std::uint32_t padded = (count + step - 1) / step * step;
  const auto point = [first](std::uint32_t j) { return first + j; };
  split_halves(f, point, padded, state0, state1);
  HWY_DYNAMIC_DISPATCH(philox_rounds)(f, padded, state0, state1);
  join_halves(f, count, state0, state1, values);
}

void evaluate_variable_philox_at(const core::VariablePhilox& f, const std::uint64_t* points, std::uint32_t count,
                                 std::uint64_t* values) {
  alignas(64) std::uint32_t state0[kPhiloxBatch + kMaxLaneStep];
  alignas(64) std::uint32_t state1[kPhiloxBatch + kMaxLaneStep];
  const std::uint32_t step = HWY_DYNAMIC_DISPATCH(philox_lane_step)();
  const std::uint32_t padded = (count + step - 1) / step * step;
  const auto point = [points, count](std::uint32_t j) { return j < count ? points[j] : 0; };  // padding lanes: 0
  split_halves(f, point, padded, state0, state1);
  HWY_DYNAMIC_DISPATCH(philox_rounds)(f, padded, state0, state1);
  join_halves(f, count, state0, state1, values);
}

std::vector<std::int64_t> philox_targets() { return hwy::SupportedAndGeneratedTargets(); }

const char* philox_target_name(std::int64_t target) { return hwy::TargetName(target); }

}  // namespace extshuffle::device::cpu
#endif  // HWY_ONCE

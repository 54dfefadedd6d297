// log(x!) for 64-bit x, and differences log(x!) - log(y!) that stay precise
// when x and y are huge (up to 2^63) and close to each other.
//
// Why a difference function: near x = 2^40, log(x!) is about 3e13, so the
// plain difference of two such values keeps only ~1e-2 absolute precision,
// while the hypergeometric samplers need log-probability ratios to ~1e-9 or
// better. Writing both Stirling series with z = x + 1, w = y + 1, d = z - w:
//   log(x!) - log(y!) = d log z + phi(w, d) + S(z) - S(w),
//   phi(w, d)         = (w - 1/2) log1p(d / w) - d
//                     = w (log1p(t) - t) - log1p(t) / 2,   t = d / w,
// where S is the tail of the Stirling series and the two 0.5 log(2 pi) cancel.
// phi is about -d^2 / (2w), so it is computed from log1p(t) - t without
// cancellation (atanh series for |t| <= 1/4), and the only term whose error
// grows with d is d log z (about |d| * 1e-16 * log z absolute).
// Callers that can cancel the d log z terms exactly (hypergeometric.hpp does:
// the four d log z of a pmf ratio combine into d log of a ratio of integers)
// use log_factorial_difference_remainder, which leaves d log z out.
//
// Pure, header-only, no IO. Not host+device: the table is a host array.
// Results depend on the libm's log/log1p (last-ulp differences between
// libraries are possible; glibc is what the golden tests pin).
#pragma once

#include <cmath>
#include <cstdint>

namespace extshuffle::core {
namespace detail {

inline constexpr std::uint64_t kLogFactorialTableSize = 256;

// log(k!) for k < 256, correctly rounded (mpmath loggamma at 50 digits).
inline constexpr double kLogFactorialTable[kLogFactorialTableSize] = {
    0.0, 0.0, 0.6931471805599453, 1.791759469228055,
    3.1780538303479458, 4.787491742782046, 6.579251212010101, 8.525161361065415,
    10.60460290274525, 12.801827480081469, 15.104412573075516, 17.502307845873887,
    19.987214495661885, 22.552163853123425, 25.19122118273868, 27.89927138384089,
    30.671860106080672, 33.50507345013689, 36.39544520803305, 39.339884187199495,
    42.335616460753485, 45.38013889847691, 48.47118135183523, 51.60667556776438,
    54.78472939811232, 58.00360522298052, 61.261701761002, 64.55753862700634,
    67.88974313718154, 71.25703896716801, 74.65823634883016, 78.0922235533153,
    81.55795945611504, 85.05446701758152, 88.58082754219768, 92.1361756036871,
    95.7196945421432, 99.33061245478743, 102.96819861451381, 106.63176026064346,
    110.32063971475739, 114.0342117814617, 117.77188139974507, 121.53308151543864,
    125.3172711493569, 129.12393363912722, 132.95257503561632, 136.80272263732635,
    140.67392364823425, 144.5657439463449, 148.47776695177302, 152.40959258449735,
    156.3608363030788, 160.3311282166309, 164.32011226319517, 168.32744544842765,
    172.3527971391628, 176.39584840699735, 180.45629141754378, 184.53382886144948,
    188.6281734236716, 192.7390472878449, 196.86618167289, 201.00931639928152,
    205.1681994826412, 209.34258675253685, 213.53224149456327, 217.73693411395422,
    221.95644181913033, 226.1905483237276, 230.43904356577696, 234.70172344281826,
    238.97838956183432, 243.2688490029827, 247.57291409618688, 251.8904022097232,
    256.22113555000954, 260.5649409718632, 264.9216497985528, 269.2910976510198,
    273.6731242856937, 278.0675734403661, 282.4742926876304, 286.893133295427,
    291.3239500942703, 295.76660135076065, 300.22094864701415, 304.6868567656687,
    309.1641935801469, 313.65282994987905, 318.1526396202093, 322.66349912672615,
    327.1852877037752, 331.7178871969285, 336.26118197919845, 340.815058870799,
    345.37940706226686, 349.95411804077025, 354.5390855194408, 359.1342053695754,
    363.73937555556347, 368.35449607240474, 372.979468885689, 377.61419787391867,
    382.25858877306, 386.91254912321756, 391.5759882173296, 396.24881705179155,
    400.93094827891576, 405.6222961611449, 410.32277652693733, 415.03230672824964,
    419.7508055995447, 424.4781934182571, 429.21439186665157, 433.9593239950148,
    438.71291418612117, 443.47508812091894, 448.2457727453846, 453.0248962384961,
    457.81238798127816, 462.6081785268749, 467.4121995716082, 472.2243839269806,
    477.04466549258564, 481.87297922988796, 486.7092611368394, 491.553448223298,
    496.40547848721764, 501.2652908915793, 506.1328253420349, 511.008022665236,
    515.8908245878224, 520.7811737160441, 525.679013515995, 530.5842882944335,
    535.4969431801695, 540.4169241059976, 545.3441777911548, 550.2786517242855,
    555.2202941468948, 560.169054037273, 565.1248810948744, 570.0877257251342,
    575.0575390247102, 580.0342727671308, 585.0178793888391, 590.0083119756179,
    595.005524249382, 600.0094705553274, 605.0201058494237, 610.0373856862386,
    615.0612662070849, 620.0917041284773, 625.128656730891, 630.1720818478102,
    635.2219378550598, 640.278183660408, 645.340778693435, 650.4096828956552,
    655.4848567108891, 660.5662610758735, 665.653857411106, 670.7476076119127,
    675.8474740397369, 680.9534195136374, 686.065407301994, 691.1834011144108,
    696.307365093814, 701.437263808737, 706.5730622457874, 711.71472580229,
    716.8622202791034, 722.0155118736012, 727.1745671728157, 732.3393531467393,
    737.5098371417774, 742.6859868743512, 747.8677704246434, 753.0551562304842,
    758.2481130813743, 763.4466101126401, 768.6506167997169, 773.8601029525583,
    779.0750387101673, 784.2953945352457, 789.5211412089589, 794.7522498258135,
    799.9886917886435, 805.230438803703, 810.4774628758636, 815.7297363039102,
    820.9872316759379, 826.2499218648428, 831.5177800239062, 836.7907795824699,
    842.0688942417004, 847.3520979704384, 852.640365001133, 857.9336698258575,
    863.2319871924054, 868.5352921004645, 873.8435597978657, 879.1567657769075,
    884.4748857707517, 889.7978957498901, 895.1257719186798, 900.4584907119452,
    905.7960287916464, 911.1383630436112, 916.4854705743287, 921.8373287078048,
    927.1939149824768, 932.5552071481862, 937.9211831632081, 943.2918211913358,
    948.6670995990199, 954.0469969525603, 959.4314920153495, 964.8205637451659,
    970.2141912915183, 975.6123539930361, 981.0150313749083, 986.4222031463685,
    991.8338491982234, 997.249949600428, 1002.6704845997002, 1008.0954346171816,
    1013.5247802461361, 1018.9585022496902, 1024.3965815586134, 1029.8389992691352,
    1035.2857366408016, 1040.7367750943672, 1046.192096209725, 1051.6516817238692,
    1057.1155135288948, 1062.5835736700299, 1068.0558443437014, 1073.5323078956328,
    1079.0129468189748, 1084.4977437524656, 1089.9866814786221, 1095.4797429219627,
    1100.976911147256, 1106.4781693578007, 1111.983500893733, 1117.492889230361,
    1123.006317976526, 1128.5237708729908, 1134.045231790853, 1139.5706847299848,
    1145.100113817496, 1150.6335033062237, 1156.1708375732421, 1161.7121011184006
};

inline constexpr double kHalfLogTwoPi = 0.91893853320467274178;  // log(2 pi) / 2

// Tail of the Stirling series, S(z) = log Gamma(z) - [(z - 1/2) log z - z + log(2 pi)/2]
// for z >= 257: 1/(12z) - 1/(360z^3) + 1/(1260z^5); the next term,
// 1/(1680 z^7), is below 1e-20 there.
inline double stirling_tail(double z) {
  const double r = 1.0 / z;
  const double r2 = r * r;
  return r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 * (1.0 / 1260.0)));
}

// log1p(t) and log1p(t) - t for t > -1, both with relative error of a few
// ulp even when t is tiny (where log1p(t) - t would cancel). For |t| <= 1/4:
// with s = t / (2 + t), log1p(t) = 2 atanh(s) = 2s (1 + s^2/3 + s^4/5 + ...)
// and 2s - t = -t s exactly, so log1p(t) - t = -t s + 2s (s^2/3 + s^4/5 + ...).
// |s| <= 1/7 there, so ten terms reach 2^-53; smaller |s| needs fewer, and
// the hypergeometric samplers mostly see |t| < 1e-3, so the series is cut
// where its next term drops below 1e-20 of the leading one (a dependent
// multiply-add chain is the cost that matters here: bench/hypergeometric_bench).
struct Log1pParts {
  double log1p;          // log(1 + t)
  double log1p_minus_t;  // log(1 + t) - t
};

inline Log1pParts log1p_parts(double t) {
  if (std::fabs(t) <= 0.25) {
    const double s = t / (2.0 + t);
    const double s2 = s * s;
    double tail;  // s^2/3 + s^4/5 + ...
    if (s2 < 1e-7) {  // next term s^8/9 < 1e-22 of the sum
      tail = s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7)));
    } else if (s2 < 1e-3) {  // next term s^14/15 < 1e-20
      tail = s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9 + s2 * (1.0 / 11 + s2 * (1.0 / 13))))));
    } else {  // |s| <= 1/7: next term s^22/23 < 2e-20
      tail = s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9 + s2 * (1.0 / 11 +
             s2 * (1.0 / 13 + s2 * (1.0 / 15 + s2 * (1.0 / 17 + s2 * (1.0 / 19 + s2 * (1.0 / 21))))))))));
    }
    const double two_s = 2.0 * s;
    return {two_s + two_s * tail, -t * s + two_s * tail};
  }
  const double l = std::log1p(t);
  return {l, l - t};
}

// x - y as a double, for any order of x and y (exact below 2^53).
inline double signed_difference(std::uint64_t x, std::uint64_t y) {
  return x >= y ? static_cast<double>(x - y) : -static_cast<double>(y - x);
}

}  // namespace detail

// log(x!) = lgamma(x + 1). Table for x < 256 (correctly rounded), Stirling
// series above (relative error a few ulp). O(1), no allocation.
inline double log_factorial(std::uint64_t x) {
  if (x < detail::kLogFactorialTableSize) return detail::kLogFactorialTable[x];
  const double z = static_cast<double>(x) + 1.0;
  return (z - 0.5) * std::log(z) - z + detail::kHalfLogTwoPi + detail::stirling_tail(z);
}

// log(x!) - log(y!) - (x - y) log(x + 1): the part of a log-factorial
// difference that is left when the leading term d log z is taken out (see the
// file comment). For x, y >= 256 its absolute error is a few ulp of its own
// size (about d^2 / (2y) + |d| / (2y)), whatever the size of x and y. When
// one of them is below 256 it falls back to the table and the Stirling value
// (absolute error ~1e-13 for moderate arguments).
inline double log_factorial_difference_remainder(std::uint64_t x, std::uint64_t y) {
  if (x == y) return 0.0;
  const double d = detail::signed_difference(x, y);
  const double z = static_cast<double>(x) + 1.0;
  if (x < detail::kLogFactorialTableSize || y < detail::kLogFactorialTableSize) {
    return log_factorial(x) - log_factorial(y) - d * std::log(z);
  }
  const double w = static_cast<double>(y) + 1.0;
  const detail::Log1pParts l = detail::log1p_parts(d / w);
  // phi(w, d) = w (log1p(t) - t) - log1p(t) / 2, then the Stirling tails.
  return w * l.log1p_minus_t - 0.5 * l.log1p + (detail::stirling_tail(z) - detail::stirling_tail(w));
}

// log(x!) - log(y!) for any x, y < 2^64. Precise when x and y are close:
// absolute error about (|x - y| * log(x + 1) + 1) * 2e-16, so ~1e-9 for
// x, y near 2^40 and |x - y| up to 1e5, where log_factorial(x) -
// log_factorial(y) would be off by ~1e-2. O(1), no allocation.
inline double log_factorial_difference(std::uint64_t x, std::uint64_t y) {
  if (x == y) return 0.0;
  if (x < detail::kLogFactorialTableSize && y < detail::kLogFactorialTableSize) {
    return detail::kLogFactorialTable[x] - detail::kLogFactorialTable[y];
  }
  if (x < detail::kLogFactorialTableSize || y < detail::kLogFactorialTableSize) {
    return log_factorial(x) - log_factorial(y);
  }
  // (w - 1/2) log1p(d / w) + d (log z - 1) + S(z) - S(w), with the first and
  // last parts from log_factorial_difference_remainder.
  const double d = detail::signed_difference(x, y);
  return d * std::log(static_cast<double>(x) + 1.0) + log_factorial_difference_remainder(x, y);
}

}  // namespace extshuffle::core

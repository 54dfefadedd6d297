// permlab: the permutation quality lab. Statistical tests (chi2, mmd,
// position, adjacency) of a chosen permutation generator, and the exact
// analysis of Waechter's butterfly networks (butterfly). Each result is one
// human-readable line plus one "LAB key=value ..." line on stdout; errors are
// one line on stderr, "permlab: <what>". Exit codes: 0 the test ran (pass or
// fail is in its output), 1 runtime failure, 2 usage error.
//
// Every sample's randomness is the lab stream (seed, Purpose::kLab, index =
// sample) or a seed drawn from it, so every number is reproducible from the
// command line that printed it (docs/quality.md lists them).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "adjacency.hpp"
#include "butterfly.hpp"
#include "chi_square.hpp"
#include "generators.hpp"
#include "mmd.hpp"
#include "position_matrix.hpp"
#include "report.hpp"

namespace {

using namespace permlab;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct Common {
  GeneratorOptions generator;
  std::uint64_t n = 0;
  std::uint64_t samples = 0;
  int threads = 1;
  double alpha = 0.01;
};

void add_generator_options(CLI::App* sub, Common& c) {
  GeneratorOptions& g = c.generator;
  sub->add_option("--generator", g.kind, "bijective, plan, lcg, butterfly or cli")
      ->check(CLI::IsMember({"bijective", "plan", "lcg", "butterfly", "cli"}))
      ->capture_default_str();
  sub->add_option("--rounds", g.rounds, "bijective: VariablePhilox rounds (1..32)")->capture_default_str();
  sub->add_option("--domain-bits", g.domain_bits,
                  "bijective: domain width in bits (default: the project's; others use the inverse, n <= 64)");
  sub->add_option("--leaf-records", g.leaf_records, "plan, cli: leaf size L (default: the shipped constant)");
  sub->add_option("--fanout", g.fanout, "plan, cli: maximum fanout F (default: the shipped constant)");
  sub->add_option("--variant", g.variant, "butterfly: padded or omitted")
      ->check(CLI::IsMember({"padded", "omitted"}))
      ->capture_default_str();
  sub->add_option("--iterations", g.iterations, "butterfly: passes of the network")->capture_default_str();
  sub->add_option("--shift-offset", g.shift_offset, "butterfly: circular shift after each pass (0 = none)");
  sub->add_flag("--shift", g.best_shift, "butterfly: shift by the offset that minimises the exact B");
  sub->add_option("--binary", g.binary, "cli: path of the extshuffle binary");
  sub->add_option("--record-size", g.record_size_bytes, "cli: bytes per record (index in the first 8)")
      ->capture_default_str();
  sub->add_option("--memory", g.memory, "cli: memory budget passed as -S (e.g. 8K to force streaming)");
  sub->add_option("--seed", g.seed, "base seed of the experiment")->capture_default_str();
  sub->add_option("--n", c.n, "records per permutation")->capture_default_str();
  sub->add_option("--samples", c.samples, "permutations drawn")->capture_default_str();
  sub->add_option("-j,--threads", c.threads, "worker threads (0 = all cores); results do not depend on it")
      ->capture_default_str();
  sub->add_option("--alpha", c.alpha, "significance level")->check(CLI::Range(1e-300, 0.5))->capture_default_str();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string verdict(bool pass) { return pass ? "PASS" : "FAIL"; }

void print(const std::string& human, const LabLine& lab) {
  if (!human.empty()) std::printf("%s\n", human.c_str());
  std::printf("%s\n", lab.str().c_str());
  std::fflush(stdout);
}

std::string heading(const Common& c) {
  return describe(c.generator, c.n) + ", n = " + std::to_string(c.n) + ", " +
         std::to_string(c.samples) + " samples";
}

void run_chi2(const Common& c, std::uint64_t pattern_records, std::uint64_t stride) {
  const auto start = std::chrono::steady_clock::now();
  const ChiSquareResult r = chi_square_test(c.generator, c.n, c.samples, c.threads, c.alpha, pattern_records, stride);
  LabLine lab("chi2");
  lab.fields(describe(c.generator, c.n))
      .add("n", c.n)
      .add("pattern_records", r.pattern_records)
      .add("stride", r.stride)
      .add("samples", r.samples)
      .add("statistic", r.statistic)
      .add("dof", r.dof)
      .add("p_value", r.p_value)
      .add("alpha", r.alpha)
      .add("critical_value", r.critical_value)
      .add("orders_seen", r.orders_seen)
      .add("pass", r.pass)
      .add("seconds", seconds_since(start));
  const std::string what = r.pattern_records == c.n ? "all " + std::to_string(r.dof + 1) + " orders"
                                                    : "the " + std::to_string(r.dof + 1) + " orders of records 0, " +
                                                          std::to_string(r.stride) + ", ..., " +
                                                          std::to_string((r.pattern_records - 1) * r.stride);
  print("chi2 over " + what + ": " + heading(c) + ": statistic " +
            format_number(r.statistic, 6) + " (dof " + std::to_string(r.dof) + ", p " + format_number(r.p_value, 4) +
            ", critical value at alpha " + format_number(c.alpha, 3) + ": " + format_number(r.critical_value, 6) +
            "): " + verdict(r.pass),
        lab);
}

void run_mmd(const Common& c, double lambda) {
  const auto start = std::chrono::steady_clock::now();
  const MmdResult r = mmd_test(c.generator, c.n, c.samples, c.threads, c.alpha, lambda);
  LabLine lab("mmd");
  lab.fields(describe(c.generator, c.n))
      .add("n", c.n)
      .add("samples", r.samples)
      .add("lambda", r.lambda)
      .add("alpha", r.alpha)
      .add("statistic", r.statistic)
      .add("hoeffding_threshold", r.hoeffding_threshold)
      .add("clt_threshold", r.clt_threshold)
      .add("z", r.z)
      .add("p_value", r.p_value)
      .add("pass_hoeffding", r.pass_hoeffding)
      .add("pass_clt", r.pass_clt)
      .add("kernel_mean", r.kernel_mean)
      .add("kernel_variance", r.kernel_variance)
      .add("identity_statistic", r.identity_statistic)
      .add("identity_clt_threshold", r.identity_clt_threshold)
      .add("pass_identity_clt", r.pass_identity_clt)
      .add("seconds", seconds_since(start));
  print("mmd (Mallows kernel, lambda " + format_number(lambda, 3) + ", paired estimate): " + heading(c) +
            ": MMD^2 " + format_number(r.statistic, 4) + " (z " + format_number(r.z, 3) + "), Hoeffding threshold " +
            format_number(r.hoeffding_threshold, 4) + ": " + verdict(r.pass_hoeffding) + ", CLT threshold " +
            format_number(r.clt_threshold, 4) + ": " + verdict(r.pass_clt),
        lab);
}

void write_matrix_csv(const std::string& path, std::uint64_t n, const std::function<double(std::uint64_t, std::uint64_t)>& at) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  for (std::uint64_t i = 0; i < n; ++i) {
    for (std::uint64_t j = 0; j < n; ++j) out << (j ? "," : "") << format_number(at(i, j), 8);
    out << '\n';
  }
  if (!out) throw std::runtime_error("cannot write " + path);
}

void print_matrix(std::uint64_t n, const std::function<double(std::uint64_t, std::uint64_t)>& at) {
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string row = "  [";
    for (std::uint64_t j = 0; j < n; ++j) {
      char cell[32];
      std::snprintf(cell, sizeof cell, "%s%.4f", j ? " " : "", at(i, j));
      row += cell;
    }
    std::printf("%s]\n", row.c_str());
  }
}

std::string matrix_values(std::uint64_t n, const std::function<double(std::uint64_t, std::uint64_t)>& at) {
  std::string values;
  for (std::uint64_t i = 0; i < n; ++i) {
    for (std::uint64_t j = 0; j < n; ++j) {
      if (!values.empty()) values += ',';
      values += format_number(at(i, j), 8);
    }
  }
  return values;
}

constexpr std::uint64_t kPrintedMatrixMaxN = 16;

void run_position(const Common& c, const std::string& matrix_out) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::uint64_t> counts;
  const PositionResult r = position_test(c.generator, c.n, c.samples, c.threads, c.alpha, &counts);
  const double s = static_cast<double>(r.samples);
  auto at = [&](std::uint64_t i, std::uint64_t j) { return static_cast<double>(counts[i * c.n + j]) / s; };
  if (c.n <= kPrintedMatrixMaxN) print_matrix(c.n, at);
  if (!matrix_out.empty()) write_matrix_csv(matrix_out, c.n, at);
  LabLine lab("position");
  lab.fields(describe(c.generator, c.n))
      .add("n", c.n)
      .add("samples", r.samples)
      .add("bias", r.bias)
      .add("expected_bias", r.expected_bias)
      .add("bias_sd", r.bias_sd)
      .add("bias_z", r.bias_z)
      .add("chi2", r.chi2)
      .add("dof", r.dof)
      .add("p_value", r.p_value)
      .add("worst_row", r.worst_row)
      .add("worst_row_p_value", r.worst_row_p_value)
      .add("alpha", r.alpha)
      .add("pass", r.pass)
      .add("seconds", seconds_since(start));
  if (c.n <= kPrintedMatrixMaxN) lab.add("matrix", matrix_values(c.n, at));
  print("position matrix: " + heading(c) + ": B(M_n) " + format_number(r.bias, 5) + " (uniform at this S: " +
            format_number(r.expected_bias, 5) + " +- " + format_number(r.bias_sd, 2) + ", z " +
            format_number(r.bias_z, 3) + "), chi2 " + format_number(r.chi2, 6) + " (dof " + std::to_string(r.dof) +
            ", p " + format_number(r.p_value, 3) + "), worst row " + std::to_string(r.worst_row) + " (p " +
            format_number(r.worst_row_p_value, 3) + " Bonferroni): " + verdict(r.pass),
        lab);
}

void run_adjacency(const Common& c) {
  const auto start = std::chrono::steady_clock::now();
  const AdjacencyResult r = adjacency_test(c.generator, c.n, c.samples, c.threads, c.alpha);
  LabLine lab("adjacency");
  lab.fields(describe(c.generator, c.n))
      .add("n", c.n)
      .add("samples", r.samples)
      .add("successions", r.successions)
      .add("reversals", r.reversals)
      .add("expected", r.expected)
      .add("sd", r.sd)
      .add("z_successions", r.z_successions)
      .add("z_reversals", r.z_reversals)
      .add("p_value", r.p_value)
      .add("alpha", r.alpha)
      .add("pass", r.pass)
      .add("seconds", seconds_since(start));
  print("adjacency: " + heading(c) + ": " + std::to_string(r.successions) + " successions, " +
            std::to_string(r.reversals) + " reversals (uniform: " + format_number(r.expected, 6) + " +- " +
            format_number(r.sd, 4) + " each; z " + format_number(r.z_successions, 3) + ", " +
            format_number(r.z_reversals, 3) + "): " + verdict(r.pass),
        lab);
}

struct ButterflyArgs {
  std::string variant = "omitted";
  std::uint64_t n = 5;
  int iterations = 1;
  std::uint64_t shift_offset = 0;
  bool best_shift = false;
  bool shift_sweep = false;
  std::string matrix_out;
};

void run_butterfly(const ButterflyArgs& a) {
  const auto start = std::chrono::steady_clock::now();
  if (a.n < 2) throw UsageError("--n must be at least 2");
  if (a.iterations < 1) throw UsageError("--iterations must be at least 1");
  const ButterflyVariant variant = parse_butterfly_variant(a.variant);
  const SquareMatrix m = butterfly_position_matrix(a.n, variant);
  const std::string name = "butterfly " + a.variant + ", n = " + std::to_string(a.n);
  const std::string fields = "variant=" + a.variant + " n=" + std::to_string(a.n);
  if (a.n <= kPrintedMatrixMaxN) {
    std::printf("%s: exact position matrix of one pass (rows: positions, columns: records):\n", name.c_str());
    print_matrix(a.n, [&m](std::uint64_t i, std::uint64_t j) { return m.at(i, j); });
    print("", LabLine("butterfly_matrix").fields(fields).add("matrix", matrix_values(a.n, [&m](std::uint64_t i, std::uint64_t j) {
      return m.at(i, j);
    })));
  }
  if (a.shift_sweep) {
    std::uint64_t best = 0;
    double best_bias = 0;
    for (std::uint64_t l = 0; l < a.n; ++l) {
      const double b = bias(iterate(m, a.iterations, l));
      if (l == 0 || b < best_bias) {
        best = l;
        best_bias = b;
      }
      std::printf("LAB test=butterfly_shift %s iterations=%d shift=%llu bias=%s\n", fields.c_str(), a.iterations,
                  static_cast<unsigned long long>(l), format_number(b).c_str());
    }
    print(name + ", " + std::to_string(a.iterations) + " iterations: smallest B " + format_number(best_bias, 4) +
              " at shift offset " + std::to_string(best),
          LabLine("butterfly_best_shift")
              .fields(fields)
              .add("iterations", a.iterations)
              .add("shift", best)
              .add("bias", best_bias)
              .add("unshifted_bias", bias(iterate(m, a.iterations, 0)))
              .add("seconds", seconds_since(start)));
    return;
  }
  const std::uint64_t offset = a.best_shift ? best_shift_offset(m, a.iterations) : a.shift_offset % a.n;
  SquareMatrix power = shift_rows(m, offset);
  const SquareMatrix step = power;
  for (int k = 1; k <= a.iterations; ++k) {
    if (k > 1) power = multiply(step, power);
    print(name + ", " + std::to_string(k) + " iteration(s), shift " + std::to_string(offset) + ": B = " +
              format_number(bias(power), 6),
          LabLine("butterfly_bias").fields(fields).add("iterations", k).add("shift", offset).add("bias", bias(power)));
  }
  if (a.iterations > 1 && a.n <= kPrintedMatrixMaxN) {
    std::printf("%s: exact position matrix after %d iterations, shift %llu:\n", name.c_str(), a.iterations,
                static_cast<unsigned long long>(offset));
    print_matrix(a.n, [&power](std::uint64_t i, std::uint64_t j) { return power.at(i, j); });
  }
  if (!a.matrix_out.empty()) {
    write_matrix_csv(a.matrix_out, a.n, [&power](std::uint64_t i, std::uint64_t j) { return power.at(i, j); });
  }
}

CLI::App* add_butterfly_command(CLI::App& app, ButterflyArgs& butterfly) {
  auto* command = app.add_subcommand("butterfly", "exact position matrices and bias of Waechter's butterfly networks");
  command->add_option("--variant", butterfly.variant, "padded or omitted")
      ->check(CLI::IsMember({"padded", "omitted"}))
      ->capture_default_str();
  command->add_option("--n", butterfly.n, "records")->capture_default_str();
  command->add_option("--iterations", butterfly.iterations, "passes: B is printed after each")->capture_default_str();
  command->add_option("--shift-offset", butterfly.shift_offset, "circular shift after each pass");
  command->add_flag("--shift", butterfly.best_shift, "use the offset minimising B after the last pass");
  command->add_flag("--shift-sweep", butterfly.shift_sweep, "B after --iterations passes for every offset");
  command->add_option("--matrix-out", butterfly.matrix_out, "write the final exact matrix as CSV");
  return command;
}

int run_cli(int argc, char** argv) {
  CLI::App app{"Permutation quality lab: statistical tests of extshuffle's permutation and of reference generators.",
               "permlab"};
  app.require_subcommand(1);
  Common chi2, mmd, position, adjacency;
  chi2.n = 5;
  chi2.samples = 120000;
  mmd.n = 100;
  mmd.samples = 100000;
  position.n = 100;
  position.samples = 10000;
  adjacency.n = 100;
  adjacency.samples = 10000;
  double lambda = 5.0;
  std::string matrix_out;
  ButterflyArgs butterfly;

  auto* chi2_cmd = app.add_subcommand("chi2", "chi-square over all n! orders (n <= 6) or the orders of k <= 6 chosen records");
  add_generator_options(chi2_cmd, chi2);
  std::uint64_t pattern_records = 0, stride = 1;
  chi2_cmd->add_option("--pattern-records", pattern_records,
                       "count the relative order of k records 0, s, ..., (k-1)s (default: all, n <= 6)");
  chi2_cmd->add_option("--stride", stride, "s, the spacing of the pattern records")->capture_default_str();
  auto* mmd_cmd = app.add_subcommand("mmd", "MMD test with the Mallows kernel (Hoeffding and CLT thresholds)");
  add_generator_options(mmd_cmd, mmd);
  mmd_cmd->add_option("--lambda", lambda, "Mallows kernel parameter")->capture_default_str();
  auto* position_cmd = app.add_subcommand("position", "Waechter's position matrix M_n, bias B(M_n), chi-square");
  add_generator_options(position_cmd, position);
  position_cmd->add_option("--matrix-out", matrix_out, "write the sampled M_n as CSV");
  auto* adjacency_cmd = app.add_subcommand("adjacency", "neighbouring records kept neighbours (successions)");
  add_generator_options(adjacency_cmd, adjacency);
  auto* butterfly_cmd = add_butterfly_command(app, butterfly);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "permlab: %s\n", e.what());
    return kExitUsage;
  }
  // Option problems found by the library (bad n, rounds, missing binary...)
  // are usage errors. Resolving once here (the butterfly's best shift costs
  // n matrix products) leaves nothing for the samplers to recompute.
  auto checked = [](Common& c) {
    try {
      c.generator = resolve_options(c.generator, c.n);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  };
  try {
    if (chi2_cmd->parsed()) {
      checked(chi2);
      run_chi2(chi2, pattern_records, stride);
    } else if (mmd_cmd->parsed()) {
      checked(mmd);
      run_mmd(mmd, lambda);
    } else if (position_cmd->parsed()) {
      checked(position);
      run_position(position, matrix_out);
    } else if (adjacency_cmd->parsed()) {
      checked(adjacency);
      run_adjacency(adjacency);
    } else if (butterfly_cmd->parsed()) {
      run_butterfly(butterfly);
    }
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "permlab: %s\n", e.what());
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "permlab: %s\n", e.what());
    return kExitFailure;
  }
}

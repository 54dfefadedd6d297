#include "record_fetch.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <exception>

#include "extshuffle/errors.hpp"
#include "all_to_all.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {
namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t to_others(const std::vector<int>& counts, int me, std::uint64_t unit_bytes) {
  std::uint64_t sum = 0;
  for (std::size_t q = 0; q < counts.size(); ++q) {
    if (static_cast<int>(q) != me) sum += static_cast<std::uint64_t>(counts[q]) * unit_bytes;
  }
  return sum;
}

}  // namespace

RecordFetch::RecordFetch(std::vector<std::uint64_t> wanted, const std::vector<std::uint64_t>& held_begin,
                         HeldRecords& held, Communicator& comm, FetchStats& stats)
    : wanted_(std::move(wanted)), held_begin_(held_begin), held_(held), comm_(comm), stats_(stats),
      ranks_(comm.size()), me_(comm.rank()), served_(static_cast<std::size_t>(comm.size())) {
  try {
    ask_for_records(false);
  } catch (...) {
    abort_job(std::current_exception());
  }
}

RecordFetch::RecordFetch(std::vector<std::uint64_t> wanted, std::vector<std::uint64_t> lengths,
                         const std::vector<std::uint64_t>& held_begin, HeldRecords& held, Communicator& comm,
                         FetchStats& stats)
    : wanted_(std::move(wanted)), lengths_(std::move(lengths)), held_begin_(held_begin), held_(held), comm_(comm),
      stats_(stats), ranks_(comm.size()), me_(comm.rank()), served_(static_cast<std::size_t>(comm.size())) {
  try {
    if (lengths_.size() != wanted_.size()) throw std::logic_error("record exchange: a length for every record wanted");
    ask_for_records(true);
  } catch (...) {
    abort_job(std::current_exception());
  }
}

void RecordFetch::ask_for_records(bool lengths_known) {
  const auto t0 = Clock::now();
  // 1. The indices, grouped by holder (in output order within each).
  std::vector<int> ask(ranks_);
  for (const std::uint64_t e : wanted_) ++ask[holder(e)];
  std::vector<std::uint64_t> at(ranks_ + 1);
  for (int h = 0; h < ranks_; ++h) at[h + 1] = at[h] + static_cast<std::uint64_t>(ask[h]);
  std::vector<std::uint64_t> grouped(wanted_.size());
  std::vector<std::uint64_t> next(at.begin(), at.end() - 1);
  for (const std::uint64_t e : wanted_) grouped[next[holder(e)]++] = e;
  const std::vector<int> asked = all_to_all(ask);
  requests_ = all_to_all(grouped, ask, asked);
  requests_begin_.assign(ranks_ + 1, 0);
  for (int q = 0; q < ranks_; ++q) requests_begin_[q + 1] = requests_begin_[q] + static_cast<std::uint64_t>(asked[q]);
  for (const std::uint64_t e : requests_) {
    if (!held_.holds(e)) throw std::logic_error("record exchange: a record asked of a rank that lacks it");
  }
  // 2. Their lengths (unless known), back in the same order, then in output order.
  if (!lengths_known) {
    std::vector<std::uint64_t> lengths(requests_.size());
    for (std::size_t k = 0; k < requests_.size(); ++k) lengths[k] = held_.record_bytes(requests_[k]);
    const std::vector<std::uint64_t> grouped_lengths = all_to_all(lengths, asked, ask);
    lengths_.resize(wanted_.size());
    next.assign(at.begin(), at.end() - 1);
    for (std::size_t k = 0; k < wanted_.size(); ++k) lengths_[k] = grouped_lengths[next[holder(wanted_[k])]++];
    stats_.count_bytes_sent += to_others(asked, me_, 8);
  }
  for (const std::uint64_t length : lengths_) wanted_bytes_ += length;
  stats_.count_bytes_sent += to_others(ask, me_, 8) + 4 * (ranks_ - 1);
  stats_.seconds_exchanging += std::chrono::duration<double>(Clock::now() - t0).count();
}

int RecordFetch::holder(std::uint64_t record) const {
  return static_cast<int>(std::upper_bound(held_begin_.begin(), held_begin_.end(), record) - held_begin_.begin()) - 1;
}

std::vector<std::uint64_t> RecordFetch::windows(std::uint64_t window_bytes) const {
  std::vector<std::uint64_t> ends;
  std::uint64_t bytes = 0;
  for (std::size_t k = 0; k < wanted_.size(); ++k) {
    if (bytes > 0 && bytes + lengths_[k] > window_bytes) {
      ends.push_back(k);
      bytes = 0;
    }
    bytes += lengths_[k];
  }
  if (!wanted_.empty()) ends.push_back(wanted_.size());
  return ends;
}

void RecordFetch::exchange(std::uint64_t first, std::uint64_t end) {
  // What this rank takes of each holder, and serves each rank.
  std::vector<int> take(ranks_), take_bytes(ranks_);
  std::vector<std::uint64_t> bytes_from(ranks_);
  for (std::uint64_t k = first; k < end; ++k) {
    const int h = holder(wanted_[k]);
    ++take[h];
    bytes_from[h] += lengths_[k];
  }
  for (int h = 0; h < ranks_; ++h) take_bytes[h] = as_count(bytes_from[h]);
  const std::vector<int> serve = all_to_all(take);
  std::vector<int> serve_bytes(ranks_);
  std::uint64_t send_total = 0;
  for (int q = 0; q < ranks_; ++q) {
    std::uint64_t bytes = 0;
    const std::uint64_t from = requests_begin_[q] + served_[q];
    for (std::uint64_t k = from; k < from + static_cast<std::uint64_t>(serve[q]); ++k) {
      bytes += held_.record_bytes(requests_[k]);
    }
    serve_bytes[q] = as_count(bytes);
    send_total += bytes;
  }
  send_.resize(send_total);
  std::byte* to = send_.data();
  for (int q = 0; q < ranks_; ++q) {
    const std::uint64_t from = requests_begin_[q] + served_[q];
    for (std::uint64_t k = from; k < from + static_cast<std::uint64_t>(serve[q]); ++k) {
      const std::uint64_t bytes = held_.record_bytes(requests_[k]);
      std::copy_n(held_.record(requests_[k]), bytes, to);
      to += bytes;
      held_.count_served(bytes);
    }
    served_[q] += static_cast<std::uint64_t>(serve[q]);
  }
  const std::vector<int> send_at = displacements(serve_bytes);
  receive_at_ = displacements(take_bytes);
  receive_.resize(static_cast<std::size_t>(receive_at_.back()) + static_cast<std::size_t>(take_bytes.back()));
  MPI_Alltoallv(send_.data(), serve_bytes.data(), send_at.data(), MPI_BYTE, receive_.data(), take_bytes.data(),
                receive_at_.data(), MPI_BYTE, MPI_COMM_WORLD);
  stats_.bytes_sent += to_others(serve_bytes, me_, 1);
  stats_.bytes_received += to_others(take_bytes, me_, 1);
  stats_.count_bytes_sent += 4 * (ranks_ - 1);
}

void RecordFetch::write_window(std::uint64_t first, std::uint64_t end, const ioperm::OutputSink& out) const {
  // Each record the next from its holder.
  std::vector<std::uint64_t> next(receive_at_.begin(), receive_at_.end());
  for (std::uint64_t k = first; k < end; ++k) {
    const int h = holder(wanted_[k]);
    out(receive_.data() + next[h], lengths_[k]);
    next[h] += lengths_[k];
  }
}

std::exception_ptr RecordFetch::write_all(const ioperm::OutputSink& out, std::uint64_t window_bytes) {
  const std::vector<std::uint64_t> ends = windows(window_bytes);
  const std::uint64_t rounds = comm_.max(ends.size());
  std::exception_ptr failure;
  const auto t0 = Clock::now();
  for (std::uint64_t t = 0; t < rounds; ++t) {
    const std::uint64_t first = t == 0 ? 0 : t - 1 < ends.size() ? ends[t - 1] : wanted_.size();
    const std::uint64_t end = t < ends.size() ? ends[t] : wanted_.size();
    try {
      exchange(first, end);
    } catch (...) {
      abort_job(std::current_exception());
    }
    try {
      if (!failure) write_window(first, end, out);
    } catch (...) {
      failure = std::current_exception();
    }
  }
  stats_.rounds = rounds;
  stats_.seconds_exchanging += std::chrono::duration<double>(Clock::now() - t0).count();
  send_ = {};
  receive_ = {};
  return failure;
}

}  // namespace extshuffle::mpi

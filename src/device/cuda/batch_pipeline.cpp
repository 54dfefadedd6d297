// shuffle_records on the GPU (docs/conventions.md, Devices): the call's jobs cut into units
// (unit_plan.hpp) that flow through three streams. While unit u's kernels
// run, the host stages unit u + 1's input into pinned slots and the copy-in
// stream moves it, and unit u - 1's output comes back on the copy-out
// stream and is copied on to the caller as its slots are retaken: both
// directions of the bus and the GPU busy at once. Two units are in flight
// (fewer when device memory is short). Byte-identical to the CPU back end.
#include <deque>
#include <memory>
#include <string>

#include "device/cuda/cuda_resources.hpp"
#include "device/cuda/kernel_launch.hpp"
#include "device/cuda/session.hpp"
#include "device/cuda/transfers.hpp"
#include "device/cuda/unit_plan.hpp"
#include "device/cuda_backend.hpp"

namespace extshuffle::device::cuda {
namespace {

struct InFlight {
  const Unit* unit = nullptr;
  DeviceBuffer d_input;
  DeviceBuffer d_output;
  std::uint64_t device_bytes = 0;
  std::unique_ptr<Event> computed = std::make_unique<Event>();
};

void run_units(const std::vector<Unit>& units, std::size_t record_size, int threads, Session& s) {
  const std::uint64_t budget = device_memory_budget();
  Transfers transfers(s.data_ring(), threads);
  std::deque<InFlight> flight;
  std::uint64_t flight_bytes = 0;
  const SynchronizeOnThrow guard(s);
  Event loaded;

  // 3. Unit u's output back: after its kernels, on the copy-out stream; its
  //    buffers are freed there once the copies are done.
  auto copy_out_oldest = [&] {
    InFlight& f = flight.front();
    f.computed->order(s.out_stream());
    transfers.copy_out(f.unit->outputs, f.d_output.bytes(), s.out_stream());
    f.d_input.release_after(s.out_stream());
    f.d_output.release_after(s.out_stream());
    flight_bytes -= f.device_bytes;
    flight.pop_front();
  };
  for (const Unit& u : units) {
    const std::uint64_t need = 2 * round_up(u.bytes, kAllocationAlignment) + launch_scratch_bytes(u.jobs);
    if (need > budget) {
      throw DeviceError("CUDA shuffle: a job of " + std::to_string(u.jobs.front().records) + " records of " +
                        std::to_string(record_size) + " bytes needs " + std::to_string(need) +
                        " bytes of device memory, " + std::to_string(budget) + " available");
    }
    while (!flight.empty() && flight_bytes + need > budget) {
      copy_out_oldest();
      s.data_ring().finish();
      check(cudaStreamSynchronize(s.out_stream()), "cudaStreamSynchronize");
    }
    // 1. Input in: staged by this thread while earlier units run.
    InFlight f{&u, DeviceBuffer(round_up(u.bytes, kAllocationAlignment), s.in_stream()),
               DeviceBuffer(round_up(u.bytes, kAllocationAlignment), s.in_stream()), need};
    transfers.copy_in(u.inputs, f.d_input.bytes(), s.in_stream());
    loaded.record(s.in_stream());
    loaded.order(s.compute_stream());
    // 2. Kernels, once the input is in.
    launch_shuffles(u.jobs, f.d_input.bytes(), f.d_output.bytes(), record_size, s.descriptor_ring(),
                    s.compute_stream());
    f.computed->record(s.compute_stream());
    flight.push_back(std::move(f));
    flight_bytes += need;
    if (flight.size() > 1) copy_out_oldest();
  }
  while (!flight.empty()) copy_out_oldest();
  // 4. The last pieces on to the caller; then nothing is left in flight.
  s.data_ring().finish();
  check(cudaStreamSynchronize(s.out_stream()), "cudaStreamSynchronize");
  check(cudaStreamSynchronize(s.compute_stream()), "cudaStreamSynchronize");
}

}  // namespace

void shuffle_records_cuda(std::span<const ShuffleJob> jobs, std::size_t record_size, int threads) {
  if (record_size == 0) return;
  auto lock = Session::lock();
  Session& s = Session::get();
  cudaGetLastError();  // a stale error of an earlier call must not fail our launch checks
  const std::vector<Unit> units = plan_units(jobs, record_size, s.config().unit_bytes, s.config().unit_jobs);
  if (!units.empty()) run_units(units, record_size, threads, s);
}

}  // namespace extshuffle::device::cuda

// A node run whole on the GPU (node_on_device.hpp): the steps of
// node_plan.hpp queued on the session's streams. A and B live in device
// memory; loads go in on the copy-in stream and unloads out on the copy-out
// stream, each ordered after the kernels by events, so the copies of one
// group overlap the kernels of the next; rows are drawn on the host meanwhile.
#include <vector>

#include "device/cuda/cuda_resources.hpp"
#include "device/cuda/kernel_launch.hpp"
#include "device/cuda/session.hpp"
#include "device/cuda/transfers.hpp"
#include "device/cuda_backend.hpp"

namespace extshuffle::device::cuda {
namespace {

static_assert(sizeof(NodeSlice) == sizeof(Slice));

class DeviceNodeSteps final : public NodeSteps {
 public:
  DeviceNodeSteps(const NodeTransfer& t, Session& s, std::byte* d_a, std::byte* d_b, int threads)
      : t_(t), s_(s), d_a_(d_a), d_b_(d_b), transfers_(s.data_ring(), threads) {}

  void load(std::uint64_t first, std::uint64_t end) override {
    const std::uint64_t r = t_.record_size;
    if (t_.input == nullptr) {  // the records are their own indices
      if (first == 0) launch_iota(reinterpret_cast<std::uint32_t*>(d_a_), t_.records, s_.compute_stream());
      return;
    }
    const HostRange range{const_cast<std::byte*>(t_.input) + first * r, first * r, (end - first) * r};
    AwaitHostBytes await;
    if (t_.options->await_input) {
      await = [this, r](std::uint64_t device_end) { t_.options->await_input((device_end + r - 1) / r); };
    }
    transfers_.copy_in(std::span<const HostRange>(&range, 1), d_a_, s_.in_stream(), await);
    loaded_.record(s_.in_stream());
    loaded_.order(s_.compute_stream());
  }

  void shuffle(std::span<const NodeShuffle> jobs) override {
    launch_jobs_.clear();
    for (const NodeShuffle& job : jobs) {
      launch_jobs_.push_back({job.bijection, job.records, job.first * t_.record_size});
    }
    launch_shuffles(launch_jobs_, d_a_, d_b_, t_.record_size, s_.descriptor_ring(), s_.compute_stream());
  }

  void scatter(std::span<const NodeSlice> slices) override {
    launch_scatter(std::span<const Slice>(reinterpret_cast<const Slice*>(slices.data()), slices.size()), d_b_, d_a_,
                   t_.record_size, s_.descriptor_ring(), s_.compute_stream());
  }

  void unload(std::uint64_t first, std::uint64_t end) override {
    const std::uint64_t r = t_.record_size;
    computed_.record(s_.compute_stream());
    computed_.order(s_.out_stream());
    const HostRange range{t_.output + first * r, first * r, (end - first) * r};
    HostBytesLanded landed;
    if (t_.options->emit) {
      landed = [this](const std::byte* host, std::uint64_t bytes) { t_.options->emit(host, bytes); };
    }
    transfers_.copy_out(std::span<const HostRange>(&range, 1), d_b_, s_.out_stream(), landed);
  }

 private:
  const NodeTransfer& t_;
  Session& s_;
  std::byte* d_a_;
  std::byte* d_b_;
  Transfers transfers_;
  Event loaded_;
  Event computed_;
  std::vector<LaunchJob> launch_jobs_;
};

}  // namespace

void run_node_cuda(const NodeTransfer& t, const std::function<void(NodeSteps&)>& walk) {
  auto lock = Session::lock();
  Session& s = Session::get();
  cudaGetLastError();  // a stale error of an earlier call must not fail our launch checks
  const std::uint64_t bytes = round_up(t.records * t.record_size, kAllocationAlignment);
  DeviceBuffer d_a(bytes, s.in_stream());
  DeviceBuffer d_b(bytes, s.in_stream());
  d_a.release_after(s.out_stream());
  d_b.release_after(s.out_stream());
  const SynchronizeOnThrow guard(s);
  {
    // A and B are used on the compute and copy-out streams too: order them
    // after the allocation.
    Event allocated;
    allocated.record(s.in_stream());
    allocated.order(s.compute_stream());
    allocated.order(s.out_stream());
  }
  DeviceNodeSteps steps(t, s, d_a.bytes(), d_b.bytes(), t.threads);
  walk(steps);
  // Every stream's work before the buffers are freed on the copy-out stream.
  Event done;
  done.record(s.compute_stream());
  done.order(s.out_stream());
  s.data_ring().finish();
  check(cudaStreamSynchronize(s.out_stream()), "cudaStreamSynchronize");
}

}  // namespace extshuffle::device::cuda

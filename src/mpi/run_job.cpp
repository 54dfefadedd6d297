// mpi::run_job(): a Job's datasets across the ranks (distributed_run.hpp).
#include "extshuffle/driver/job_plan.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/mpi/distributed_run.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {

std::vector<DistributedResult> run_job(const Job& job, Communicator& comm) {
  // Every path read and written, checked before any work, as on one machine.
  checkpoint(comm, [&] { driver::plan_job(job); });
  // Every input prepared (counted) before any output: aligned inputs must
  // hold as many records each.
  std::vector<DistributedInput> inputs;
  for (const JobDataset& dataset : job.datasets) {
    inputs.push_back(prepare_input(job.options, dataset, comm));
    if (inputs.back().records() != inputs.front().records()) {
      checkpoint(comm, [&] {
        throw InputError("inputs differ in record count: '" + job.datasets[0].inputs[0] + "' has " +
                         std::to_string(inputs.front().records()) + ", '" + dataset.inputs[0] + "' has " +
                         std::to_string(inputs.back().records()));
      });
    }
  }
  std::vector<DistributedResult> results;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    results.push_back(run(job.options, job.datasets[k], std::move(inputs[k]), comm));
  }
  return results;
}

}  // namespace extshuffle::mpi

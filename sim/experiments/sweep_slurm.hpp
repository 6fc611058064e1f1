#pragma once
// fleetsim sweep on a SLURM cluster, as a job array: --slurm-array plans the sweep (the same checks and
// resume as the local backend), writes DIR/runs/<id>/scenario.toml of every pending run, their ids one
// a line in DIR/slurm/runs.txt and an sbatch script DIR/slurm/sweep.sbatch (also printed) with one
// array task per pending run: `fleetsim sweep SWEEP --out DIR --run-one $SLURM_ARRAY_TASK_ID` runs
// line N of runs.txt exactly as the local backend runs it. Then `fleetsim sweep SWEEP --out DIR
// --collect` only builds runs.csv, aggregate.csv and paired.csv from DIR/runs/*/ and prints the table.
#include <cstddef>
#include <string>

#include "sim/experiments/sweep.hpp"

namespace fleetsim {

/// --slurm-array. Returns 0. Throws InputError on bad input (nothing written then).
int write_slurm_array(const std::string& path, const SweepOptions& options);
/// --run-one N: runs line N (from 0) of DIR/slurm/runs.txt. Returns 0 ok, 1 failed (recorded), 130
/// interrupted. Throws InputError when there is no such line or run.
int run_one_listed(const std::string& path, const SweepOptions& options, std::size_t index);
/// --collect: the results of the runs in DIR/runs/ (runs not there are "missing"). Returns 0 when every
/// run succeeded, else 1.
int collect_sweep(const std::string& path, const SweepOptions& options);

}  // namespace fleetsim

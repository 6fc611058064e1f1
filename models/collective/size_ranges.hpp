#pragma once
// One collective calibration over the whole message-size range, per link kind: the per-call
// small-message measurements (Vidur's NCCL collectives fitted by protocol regime,
// vidur_link_calibration(), 2 KiB to 64 MiB) below a boundary, nccl-tests fits (1 MiB to 1 GiB) from
// it. The calibrated collective model then times a call of any size on the link it runs on, and a
// collective across servers as its intra-server part plus the NICs (collective_model.hpp).
#include <string>

#include "models/collective/collective_model.hpp"

namespace fleetsim {

/// Where `large` (nccl-tests) takes over from `small` by default: its smallest measured size, 1 MiB.
/// Between 1 and 64 MiB both were measured; models/llm/README.md ("Communication") gives the
/// accuracy of each choice on vTrain's measured iterations.
inline constexpr double kSpliceBytes = 1048576;

/// `large`'s curves with `small`'s bands spliced in below the boundary, for every (system, op,
/// ranks, nodes) measured in both. The switch is at `boundary_bytes`, clamped to sizes both
/// measured (no fit is used outside its measured range where the other has measurements). A
/// `large` curve without a link kind takes its system's link from `small` (the link of `small`'s
/// curve with the most ranks of that op; an A100 measured on 8 GPUs is on NVSwitch); `small`'s
/// curves that `large` lacks are kept whole. Analytic constants and node topologies are `large`'s.
CollectiveCalibration splice_sizes(const CollectiveCalibration& large, const CollectiveCalibration& small,
                                   double boundary_bytes = kSpliceBytes);

/// The link to look curves of `system` up by, for a GPU whose servers link it by `wanted`:
/// `wanted` when the calibration records link kinds for that system (a link it never measured then
/// falls back to the analytic model), else "" (a calibration without link kinds is used as it is).
std::string calibrated_link(const CollectiveCalibration& cal, const std::string& system,
                            const std::string& wanted);

}  // namespace fleetsim

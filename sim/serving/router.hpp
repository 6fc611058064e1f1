#pragma once
// Routing of a service's arriving requests to its replicas: one policy per file (sim/serving/routers/),
// each registering itself by name with a one-line description (`routing` key of a [[service]]). The
// serving engine hands a router the replicas that can take a request now, in replica order: up (not in
// an outage), ready (switched on by the autoscaler, model loaded) and taking arrivals (the prefill
// replicas when disaggregated). A new policy is one new file:
//
//   class FirstReplica final : public Router {
//    public:
//     std::size_t pick(const ServingRequest&, std::span<const RouteCandidate>) override { return 0; }
//   };
//   const RouterRegistrar kRegistrar{"first-replica", "the lowest-numbered replica that can take it",
//                                    [](const RouterParams&) { return std::make_unique<FirstReplica>(); }};
//
// A router with keys of its own declares them beside it (workloads/base/keys.hpp, table "service[]")
// and reads them from RouterParams::options.
#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "sim/serving/prefix_cache.hpp"
#include "workloads/base/options.hpp"
#include "workloads/base/registry.hpp"
#include "workloads/requests/request_trace.hpp"

namespace fleetsim {

/// A replica that can take a request now, as a router sees it.
struct RouteCandidate {
  int replica = 0;                     ///< its index among the service's replicas
  int running = 0;                     ///< requests it runs
  int waiting = 0;                     ///< requests queued on it
  const PrefixCache* cache = nullptr;  ///< its prompt-prefix cache (empty without prefix caching)
  int outstanding() const { return running + waiting; }
};

class Router {
 public:
  virtual ~Router() = default;
  /// The position in `candidates` (never empty) of the replica that takes `request`.
  virtual std::size_t pick(const ServingRequest& request, std::span<const RouteCandidate> candidates) = 0;
};

struct RouterParams {
  int replicas = 1;                  ///< replicas taking arrivals (candidates are among them)
  const Options* options = nullptr;  ///< the service's table (a router's own keys); never null
};

using RouterRegistry = Registry<Router, const RouterParams&>;
RouterRegistry& routers();

struct RouterRegistrar {
  RouterRegistrar(std::string name, std::string description, RouterRegistry::Factory f) {
    routers().add(std::move(name), std::move(description), std::move(f));
  }
};

}  // namespace fleetsim

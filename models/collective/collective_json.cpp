// The collective calibration's JSON form (fleetsim.collective-calibration): writing and reading.
#include <array>
#include <fstream>
#include <string>

#include "models/collective/collective_model.hpp"
#include "workloads/base/file_input.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/json_text.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

namespace {

constexpr const char* kFormat = "fleetsim.collective-calibration";
constexpr std::array<CollectiveProtocol, 3> kProtocols{CollectiveProtocol::ll, CollectiveProtocol::ll128,
                                                       CollectiveProtocol::simple};

nlohmann::json protocols_json(const std::array<ProtocolParams, 3>& ps) {
  nlohmann::json j = nlohmann::json::object();
  for (auto p : kProtocols) {
    const auto& pp = ps[static_cast<std::size_t>(p)];
    j[to_string(p)] = {{"base_latency_s", pp.base_latency_s},
                       {"hop_latency_factor", pp.hop_latency_factor},
                       {"efficiency", pp.efficiency}};
  }
  return j;
}

double number(const nlohmann::json& j, const char* key, const std::string& file, const std::string& where,
              bool positive) {
  const std::string field = where.empty() ? key : where + "." + key;
  if (!j.is_object() || !j.contains(key)) throw InputError(file, 0, field, "missing");
  const auto& v = j.at(key);
  if (!v.is_number()) throw InputError(file, 0, field, "must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0 || (positive && d == 0))
    throw InputError(file, 0, field,
                     positive ? "must be a positive number" : "must be a non-negative number");
  return d;
}

/// number() for a count stored as int: a required one (ranks, nodes) must be positive, an optional one
/// (samples) non-negative, and absent it is 0.
int count(const nlohmann::json& j, const char* key, const std::string& file, const std::string& where,
          bool required) {
  if (!required && (!j.is_object() || !j.contains(key))) return 0;
  return to_int32(number(j, key, file, where, required), file, 0, where.empty() ? key : where + "." + key);
}

std::string text(const nlohmann::json& j, const char* key, const std::string& file,
                 const std::string& where) {
  const std::string field = where.empty() ? key : where + "." + key;
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_string())
    throw InputError(file, 0, field, "missing or not a string");
  return j.at(key).get<std::string>();
}

}  // namespace

nlohmann::json to_json(const CollectiveCalibration& cal) {
  nlohmann::json curves = nlohmann::json::array();
  for (const auto& c : cal.curves) {
    nlohmann::json bands = nlohmann::json::array();
    for (const auto& b : c.bands) {
      nlohmann::json band = {{"min_bytes", b.min_bytes},
                             {"max_bytes", b.max_bytes},
                             {"latency_s", b.latency_s},
                             {"busbw_gbs", b.busbw_gbs},
                             {"samples", b.samples}};
      if (!b.protocol.empty()) band["protocol"] = b.protocol;
      bands.push_back(std::move(band));
    }
    nlohmann::json curve = {{"system", c.system}, {"op", to_string(c.op)}, {"ranks", c.ranks},
                            {"nodes", c.nodes},   {"samples", c.samples},  {"bands", bands}};
    if (!c.link.empty()) curve["link"] = c.link;
    curves.push_back(std::move(curve));
  }
  nlohmann::json out = {
      {"format", kFormat},
      {"version", 1},
      {"analytic",
       {{"ring", protocols_json(cal.analytic.ring)}, {"tree", protocols_json(cal.analytic.tree)}}},
      {"curves", curves}};
  if (!cal.node_topology.empty()) {
    nlohmann::json topo = nlohmann::json::object();
    for (const auto& [system, t] : cal.node_topology) topo[system] = t->name;
    out["node_topology"] = topo;
  }
  return out;
}

CollectiveCalibration collective_calibration_from_json(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object()) throw InputError(file, 0, "", "a collective calibration must be a JSON object");
  if (text(j, "format", file, "") != kFormat)
    throw InputError(file, 0, "format", std::string("expected '") + kFormat + "'");
  if (number(j, "version", file, "", true) != 1)
    throw InputError(file, 0, "version", "unsupported version (expected 1)");
  CollectiveCalibration cal;
  if (j.contains("analytic")) {
    const auto& a = j.at("analytic");
    for (const char* algo : {"ring", "tree"}) {
      if (!a.is_object() || !a.contains(algo))
        throw InputError(file, 0, std::string("analytic.") + algo, "missing");
      auto& dst = std::string(algo) == "ring" ? cal.analytic.ring : cal.analytic.tree;
      for (auto p : kProtocols) {
        const std::string where = std::string("analytic.") + algo + "." + to_string(p);
        if (!a.at(algo).contains(to_string(p))) throw InputError(file, 0, where, "missing");
        const auto& pj = a.at(algo).at(to_string(p));
        auto& pp = dst[static_cast<std::size_t>(p)];
        pp.base_latency_s = number(pj, "base_latency_s", file, where, false);
        pp.hop_latency_factor = number(pj, "hop_latency_factor", file, where, false);
        pp.efficiency = number(pj, "efficiency", file, where, true);
      }
    }
  }
  if (!j.contains("curves") || !j.at("curves").is_array())
    throw InputError(file, 0, "curves", "missing or not an array");
  const auto& cs = j.at("curves");
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const std::string where = "curves[" + std::to_string(i) + "]";
    const auto& cj = cs[i];
    CollectiveCurve c;
    c.system = text(cj, "system", file, where);
    if (cj.contains("link")) c.link = text(cj, "link", file, where);
    c.op = parse_collective(text(cj, "op", file, where), file, 0, where + ".op");
    c.ranks = count(cj, "ranks", file, where, true);
    c.nodes = count(cj, "nodes", file, where, true);
    c.samples = count(cj, "samples", file, where, false);
    if (!cj.contains("bands") || !cj.at("bands").is_array() || cj.at("bands").empty())
      throw InputError(file, 0, where + ".bands", "missing or empty array");
    for (std::size_t k = 0; k < cj.at("bands").size(); ++k) {
      const std::string bw = where + ".bands[" + std::to_string(k) + "]";
      const auto& bj = cj.at("bands")[k];
      CollectiveBand b;
      b.min_bytes = number(bj, "min_bytes", file, bw, false);
      b.max_bytes = number(bj, "max_bytes", file, bw, false);
      b.latency_s = number(bj, "latency_s", file, bw, false);
      b.busbw_gbs = number(bj, "busbw_gbs", file, bw, true);
      b.samples = count(bj, "samples", file, bw, false);
      if (bj.contains("protocol")) b.protocol = text(bj, "protocol", file, bw);
      if (!c.bands.empty() && b.min_bytes < c.bands.back().min_bytes)
        throw InputError(file, 0, bw + ".min_bytes", "bands must be sorted by min_bytes");
      c.bands.push_back(b);
    }
    cal.curves.push_back(std::move(c));
  }
  if (j.contains("node_topology")) {
    const auto& t = j.at("node_topology");
    if (!t.is_object()) throw InputError(file, 0, "node_topology", "expected an object {system: topology}");
    for (const auto& [system, name] : t.items()) {
      if (!name.is_string()) throw InputError(file, 0, "node_topology." + system, "expected a topology name");
      cal.node_topology[system] = &node_topology(name.get<std::string>(), file, 0, "node_topology." + system);
    }
  }
  return cal;
}

CollectiveCalibration load_collective_calibration(const std::string& path) {
  if (!std::ifstream(path)) throw InputError(path, 0, "", "cannot open collective calibration");
  const nlohmann::json j = parse_json_text(read_input_file(path), path, "invalid JSON");
  return collective_calibration_from_json(j, path);
}

}  // namespace fleetsim

// Vidur's measured NCCL collectives inside one server (../shared/data/serving/vidur-profiling/network),
// fitted by protocol regime: the built-in curves of serving_links.hpp. Regenerate with
//   fleetsim calibrate fit --collective-fit regimes --out cal.json
//   ../shared/data/serving/vidur-profiling/network
// keeping the nodes = 1 curves; tests/unit/test_serving_links.cpp refits them from the shared data and
// fails, naming the curve, when this table no longer matches.
#include "models/collective/serving_links.hpp"

namespace fleetsim {
namespace {

struct Row {
  const char* system;
  const char* link;
  Collective op;
  int ranks;
  double min_bytes, max_bytes, latency_s, busbw_gbs;
  int samples;
  const char* protocol;
};

// clang-format off
constexpr Row kRows[] = {
    {"A100", "nvlink-pair", Collective::all_reduce, 2, 2048, 83968, 7.128776673275737e-06, 1.4341727818417893, 11, "LL"},
    {"A100", "nvlink-pair", Collective::all_reduce, 2, 92160, 1441792, 1.0197072288781907e-05, 19.906412026036801, 130, "LL128"},
    {"A100", "nvlink-pair", Collective::all_reduce, 2, 1474560, 536373250, 3.642737849276575e-05, 195.1389736197612, 2107, "Simple"},
    {"A100", "nvlink-pair", Collective::all_reduce, 4, 2048, 18432, 6.0608772760907001e-05, 1000000, 3, "LL"},
    {"A100", "nvlink-pair", Collective::all_reduce, 4, 26624, 51200, 0, 1.3004103384192507, 4, "LL128"},
    {"A100", "nvlink-pair", Collective::all_reduce, 4, 59392, 536373250, 5.8034171159642835e-05, 23.606238902906526, 2241, "Simple"},
    {"A100", "nvlink-pair", Collective::send_recv, 2, 2048, 26624, 3.5455023671751723e-06, 5.4989378531073463, 4, "LL"},
    {"A100", "nvlink-pair", Collective::send_recv, 2, 34816, 8388608, 8.8355159924761087e-06, 465.17396216098911, 349, "LL128"},
    {"A100", "nvlink-pair", Collective::send_recv, 2, 8421376, 67108864, 3.4058397199843953e-06, 327.53049929207924, 641, "Simple"},
    {"A100", "nvswitch", Collective::all_reduce, 2, 2048, 133120, 1.3840714659626743e-05, 2.3931843784502682, 17, "LL"},
    {"A100", "nvswitch", Collective::all_reduce, 2, 141312, 411648, 2.674054186611345e-05, 1000000, 34, "LL128"},
    {"A100", "nvswitch", Collective::all_reduce, 2, 419840, 67108864, 4.4790793994192771e-05, 171.65153973372429, 943, "Simple"},
    {"A100", "nvswitch", Collective::all_reduce, 4, 2048, 321536, 1.3335170072429242e-05, 8.1013708958713284, 40, "LL"},
    {"A100", "nvswitch", Collective::all_reduce, 4, 329728, 845824, 1.8327196784527383e-05, 103.89190173504383, 64, "LL128"},
    {"A100", "nvswitch", Collective::all_reduce, 4, 854016, 67108864, 4.7827459881850206e-05, 172.36332265053528, 890, "Simple"},
    {"A100", "nvswitch", Collective::all_reduce, 8, 2048, 477184, 3.1031415598363878e-05, 34.483871698697442, 59, "LL"},
    {"A100", "nvswitch", Collective::all_reduce, 8, 485376, 24248320, 3.2076761380747223e-05, 122.37313854974749, 608, "LL128"},
    {"A100", "nvswitch", Collective::all_reduce, 8, 24379392, 67108864, 0.00013605206191149547, 215.17916592123382, 327, "Simple"},
    {"A100", "nvswitch", Collective::send_recv, 2, 2048, 8388608, 1.519474753022013e-05, 385.02613963988972, 353, "LL"},
    {"A100", "nvswitch", Collective::send_recv, 2, 8421376, 33554432, 1.020878570067609e-05, 291.96559470678005, 385, "LL128"},
    {"A100", "nvswitch", Collective::send_recv, 2, 33685504, 67108864, 1.3675390340299553e-05, 238.62379815538142, 256, "Simple"},
    {"A40", "nvlink-pair", Collective::send_recv, 2, 2048, 67584, 3.0759757754842044e-06, 5.7228554302261774, 9, "LL"},
    {"A40", "nvlink-pair", Collective::send_recv, 2, 75776, 5865472, 2.6325241677357077e-06, 4.3357159868563313, 267, "LL128"},
    {"A40", "nvlink-pair", Collective::send_recv, 2, 5898240, 67108864, 0, 4.061620502182083, 718, "Simple"},
    {"H100", "nvlink-pair", Collective::all_reduce, 2, 2048, 575488, 7.3270807206455535e-06, 66.018771593150674, 71, "LL"},
    {"H100", "nvlink-pair", Collective::all_reduce, 2, 583680, 3342336, 2.1923666885520781e-05, 320.32657992083648, 128, "LL128"},
    {"H100", "nvlink-pair", Collective::all_reduce, 2, 3375104, 67108864, 1.551558603056583e-05, 195.92013684063014, 795, "Simple"},
    {"H100", "nvlink-pair", Collective::all_reduce, 4, 2048, 26624, 2.7442389758179232e-05, 1000000, 4, "LL"},
    {"H100", "nvlink-pair", Collective::all_reduce, 4, 34816, 632832, 1.5504181418653642e-05, 31.031620453021695, 74, "LL128"},
    {"H100", "nvlink-pair", Collective::all_reduce, 4, 641024, 67108864, 4.9117564462014962e-05, 49.553601984266557, 916, "Simple"},
    {"H100", "nvlink-pair", Collective::send_recv, 2, 2048, 26624, 3.5455023671751723e-06, 5.4989378531073463, 4, "LL"},
    {"H100", "nvlink-pair", Collective::send_recv, 2, 34816, 8388608, 8.8355159924761087e-06, 465.17396216098911, 349, "LL128"},
    {"H100", "nvlink-pair", Collective::send_recv, 2, 8421376, 67108864, 3.4058397199843953e-06, 327.53049929207924, 641, "Simple"},
    {"H100", "nvswitch", Collective::all_reduce, 2, 2048, 796672, 1.0567200180335177e-05, 87.151793566852703, 98, "LL"},
    {"H100", "nvswitch", Collective::all_reduce, 2, 804864, 7274496, 3.156638712363253e-05, 593.41693195237292, 221, "LL128"},
    {"H100", "nvswitch", Collective::all_reduce, 2, 7307264, 67108864, 1.6077733597205642e-05, 286.96341567096005, 675, "Simple"},
    {"H100", "nvswitch", Collective::all_reduce, 4, 2048, 673792, 3.8463727756455584e-05, 155.58578042034537, 83, "LL"},
    {"H100", "nvswitch", Collective::all_reduce, 4, 681984, 993280, 0, 35.791822531991784, 39, "LL128"},
    {"H100", "nvswitch", Collective::all_reduce, 4, 1001472, 67108864, 2.627082492003923e-05, 357.66358688481654, 872, "Simple"},
    {"H100", "nvswitch", Collective::all_reduce, 8, 2048, 149504, 2.4620240713161661e-05, 1000000, 19, "LL"},
    {"H100", "nvswitch", Collective::all_reduce, 8, 157696, 8421376, 2.762783907627327e-05, 308.79836699777047, 335, "LL128"},
    {"H100", "nvswitch", Collective::all_reduce, 8, 8454144, 67108864, 4.1118344519173703e-05, 377.27249160856809, 640, "Simple"},
    {"H100", "nvswitch", Collective::send_recv, 2, 2048, 26624, 4.948111749799125e-06, 11.177126665542264, 4, "LL"},
    {"H100", "nvswitch", Collective::send_recv, 2, 34816, 1409024, 7.9650199739697345e-06, 512.39567773408498, 136, "LL128"},
    {"H100", "nvswitch", Collective::send_recv, 2, 1441792, 67108864, 8.3636876678055193e-06, 363.82097759184097, 854, "Simple"},
};
// clang-format on

}  // namespace

CollectiveCalibration vidur_link_calibration() {
  CollectiveCalibration cal;
  for (const Row& r : kRows) {
    if (cal.curves.empty() || cal.curves.back().system != r.system || cal.curves.back().link != r.link ||
        cal.curves.back().op != r.op || cal.curves.back().ranks != r.ranks) {
      CollectiveCurve c;
      c.system = r.system;
      c.link = r.link;
      c.op = r.op;
      c.ranks = r.ranks;
      c.nodes = 1;
      cal.curves.push_back(std::move(c));
    }
    CollectiveCurve& c = cal.curves.back();
    c.bands.push_back({r.min_bytes, r.max_bytes, r.latency_s, r.busbw_gbs, r.samples, r.protocol});
    c.samples += r.samples;
  }
  return cal;
}

}  // namespace fleetsim

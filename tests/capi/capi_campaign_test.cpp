// The C API's fuzz cases are ssd-fuzz's: ssd_capi_campaign_problem gives the problem of
// ssd::campaign_problem (what ssd-fuzz runs as case k) for every op, several seeds, shards,
// dtype lists and large fractions. This test links both: the C++ function and the C library.
#include <cstdio>
#include <string>

#include "check.h"
#include "ssd/fuzz/campaign.h"

int main() {
  const std::uint64_t seeds[] = {0, 1, 42, 1ull << 40};
  const struct {
    std::int64_t shard, shards;
  } shards[] = {{0, 1}, {2, 5}};
  const char* dtype_lists[] = {nullptr, "f16", "bf16,f32"};
  const double large[] = {0.05, 0.5};
  int compared = 0;
  for (ssd::Op op : ssd::kAllOps)
    for (std::uint64_t seed : seeds)
      for (const auto& sh : shards)
        for (const char* dtypes : dtype_lists)
          for (double lf : large) {
            if (op == ssd::Op::discretize_segsum && dtypes == nullptr) continue;
            ssd_capi_campaign_options c;
            OK(ssd_capi_campaign_defaults(&c));
            c.seed = seed, c.shard = sh.shard, c.shards = sh.shards, c.dtypes = dtypes, c.large_fraction = lf;
            ssd::CampaignOptions o;
            o.seed = seed, o.shard = sh.shard, o.shards = sh.shards, o.large_fraction = lf;
            if (dtypes) {
              std::string list = dtypes;
              for (std::size_t at = 0; at <= list.size();) {
                const std::size_t comma = std::min(list.find(',', at), list.size());
                o.dtypes.push_back(ssd::parse_dtype(list.substr(at, comma - at), "dtypes"));
                at = comma + 1;
              }
            }
            for (std::int64_t k = sh.shard; k < 24 * sh.shards; k += sh.shards) {
              ssd_problem* p = nullptr;
              OK(ssd_capi_campaign_problem(std::string(ssd::op_name(op)).c_str(), &c, k, &p));
              const char* text = nullptr;
              OK(ssd_capi_problem_string(p, &text));
              const std::string want = ssd::to_string(ssd::campaign_problem(op, o, k));
              CHECK(text != nullptr && want == text);
              if (text != nullptr && want != text) std::fprintf(stderr, "  k %lld: C API '%s', ssd-fuzz '%s'\n",
                                                              static_cast<long long>(k), text, want.c_str());
              ssd_capi_problem_free(p);
              ++compared;
            }
          }
  std::printf("%d cases compared\n", compared);
  return check_failures ? 1 : 0;
}

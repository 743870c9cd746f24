// Shared helpers of the unit tests: tensor builders, the two oracle forms per op, tolerant checks.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ssd/reference/dtype.h"
#include "ssd/reference/errors.h"
#include "ssd/reference/oracle.h"
#include "ssd/reference/outputs.h"
#include "ssd/reference/tensor.h"

namespace ssd_test {

using ssd::DType;
using ssd::Outputs;
using ssd::Shape;
using ssd::Tensor;

inline Tensor f32(Shape shape, std::vector<double> values) {
  return Tensor(DType::f32, std::move(shape), std::move(values));
}
inline Tensor i32(Shape shape, std::vector<double> values) {
  return Tensor(DType::i32, std::move(shape), std::move(values));
}
inline Tensor bf16(Shape shape, std::vector<double> values) {
  return Tensor(DType::bf16, std::move(shape), std::move(values));
}

// e^k, written where a hand derivation has a decay exp(k).
inline double e(double k) { return std::exp(k); }
// silu(z) = z * sigmoid(z) = z / (1 + e^-z).
inline double silu(double z) { return z / (1.0 + std::exp(-z)); }
inline const double kLn2 = std::log(2.0);
inline const double kInf = std::numeric_limits<double>::infinity();

// One oracle form of an op: its name (the test parameter's name) and entry point.
template <class Args>
struct OracleForm {
  const char* name;
  Outputs (*run)(const Args&);
};
template <class Args>
void PrintTo(const OracleForm<Args>& form, std::ostream* os) {
  *os << form.name;
}
template <class Args>
std::string form_name(const ::testing::TestParamInfo<OracleForm<Args>>& info) {
  return info.param.name;
}

// Both forms of every op, so that every hand-worked case runs against each.
inline const OracleForm<ssd::Mamba2Args> kMamba2Forms[] = {{"chunked", ssd::mamba2_chunked},
                                                           {"sequential", ssd::mamba2_sequential}};
inline const OracleForm<ssd::ChunkCumsumArgs> kChunkCumsumForms[] = {
    {"chunked", ssd::chunk_cumsum_chunked}, {"sequential", ssd::chunk_cumsum_sequential}};
inline const OracleForm<ssd::ChunkCouplingArgs> kChunkCouplingForms[] = {
    {"chunked", ssd::chunk_coupling_chunked}, {"sequential", ssd::chunk_coupling_sequential}};
inline const OracleForm<ssd::ChunkStateArgs> kChunkStateForms[] = {
    {"chunked", ssd::chunk_state_chunked}, {"sequential", ssd::chunk_state_sequential}};
inline const OracleForm<ssd::StatePassingArgs> kStatePassingForms[] = {
    {"chunked", ssd::state_passing_chunked}, {"sequential", ssd::state_passing_sequential}};
inline const OracleForm<ssd::ChunkScanArgs> kChunkScanForms[] = {
    {"chunked", ssd::chunk_scan_chunked}, {"sequential", ssd::chunk_scan_sequential}};
inline const OracleForm<ssd::RecurrentArgs> kRecurrentForms[] = {
    {"chunked", ssd::recurrent_chunked}, {"sequential", ssd::recurrent_sequential}};
inline const OracleForm<ssd::DiscretizeSegsumArgs> kDiscretizeSegsumForms[] = {
    {"chunked", ssd::discretize_segsum_chunked}, {"sequential", ssd::discretize_segsum_sequential}};

// |actual - expected| <= rel * |expected|; an expected 0 must be met exactly.
inline ::testing::AssertionResult near_rel(double actual, double expected, double rel = 1e-14) {
  const double allowed = rel * std::fabs(expected);
  if (std::fabs(actual - expected) <= allowed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "actual " << ::testing::PrintToString(actual) << " vs expected "
                                       << ::testing::PrintToString(expected) << " (difference "
                                       << actual - expected << ", allowed " << allowed << ")";
}
#define EXPECT_REL(actual, expected) EXPECT_TRUE(::ssd_test::near_rel((actual), (expected)))

// Value of output `name` at a full index.
inline double at(const Outputs& r, std::string_view name, std::initializer_list<std::int64_t> index) {
  return r.get(name).value.at(index);
}
// Whether the contract defines output `name` at a full index.
inline bool defined_at(const Outputs& r, std::string_view name, std::initializer_list<std::int64_t> index) {
  const ssd::Output& o = r.get(name);
  return o.is_defined(o.value.offset(index));
}

// Expects `call` to throw ssd::ArgumentError whose argument() is one of `names` and whose what()
// quotes it ("'x'").
template <class Call>
void expect_argument_error(Call&& call, std::initializer_list<std::string_view> names) {
  EXPECT_THROW(call(), ssd::ArgumentError);
  try {
    call();
    ADD_FAILURE() << "no ssd::ArgumentError thrown (expected one naming "
                  << ::testing::PrintToString(std::vector<std::string>(names.begin(), names.end())) << ")";
  } catch (const ssd::ArgumentError& error) {
    const std::string what = error.what();
    bool named = false;
    for (std::string_view name : names)
      if (error.argument() == name && what.find("'" + std::string(name) + "'") != std::string::npos) named = true;
    EXPECT_TRUE(named) << "ArgumentError names '" << error.argument() << "': " << what;
  } catch (const std::exception& other) {
    ADD_FAILURE() << "threw another exception type: " << other.what();
  }
}

}  // namespace ssd_test

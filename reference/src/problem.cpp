// The compact problem string: canonical printing and a strict parser.
#include "ssd/reference/problem.h"

#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <sstream>

#include "ssd/reference/errors.h"
#include "ssd/reference/op_spec.h"

namespace ssd {
namespace {

// Shortest decimal that reads back to the same double; "inf" / "-inf" for infinities.
std::string format_number(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, end);
}

// Builds by appending: GCC 12 warns falsely (-Wrestrict) on `"literal" + std::string(...)`.
std::string concat(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (auto part : parts) s.append(part);
  return s;
}

[[noreturn]] void bad_token(std::string_view token, const std::string& why) {
  throw ArgumentError("problem", "token '" + std::string(token) + "': " + why);
}

std::int64_t parse_integer(std::string_view token, std::string_view text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    bad_token(token, concat({"'", text, "' is not an integer"}));
  return v;
}

double parse_number(std::string_view token, std::string_view text) {
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || std::isnan(v))
    bad_token(token, concat({"'", text, "' is not a number"}));
  return v;
}

std::int64_t* dim_field(Problem& p, char dim) {
  switch (dim) {
    case 'b': return &p.b;
    case 's': return &p.s;
    case 'h': return &p.h;
    case 'p': return &p.p;
    case 'g': return &p.g;
    case 'n': return &p.n;
    case 'q': return &p.q;
    case 'd': return &p.d;
    default: return nullptr;
  }
}

// "3,0,2": the integers separated by commas, as seq= runs and rows= write them.
std::string join_integers(const std::vector<std::int64_t>& values) {
  std::string s;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) s.push_back(',');
    s.append(std::to_string(values[i]));
  }
  return s;
}

std::string format_seq(const SeqSpec& seq) {
  if (seq.kind == SeqSpec::Kind::random) return "seq=rand";
  return "seq=" + std::to_string(seq.first_id) + ":" + join_integers(seq.runs);
}

SeqSpec parse_seq(std::string_view token, std::string_view value) {
  SeqSpec seq;
  if (value == "rand") {
    seq.kind = SeqSpec::Kind::random;
    return seq;
  }
  const auto colon = value.find(':');
  if (colon == std::string_view::npos) bad_token(token, "expected seq=rand or seq=<first id>:<run>,<run>,...");
  seq.kind = SeqSpec::Kind::runs;
  seq.first_id = parse_integer(token, value.substr(0, colon));
  if (seq.first_id < 0) bad_token(token, "the first id must be non-negative");
  std::string_view rest = value.substr(colon + 1);
  while (true) {
    const auto comma = rest.find(',');
    const std::int64_t run = parse_integer(token, rest.substr(0, comma));
    if (run == 0) bad_token(token, "a run length of 0");
    if (!seq.runs.empty() && seq.runs.back() < 0 && run > 0) bad_token(token, "a sequence after padding");
    seq.runs.push_back(run);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return seq;
}

// Largest extent of a size: beyond it even the chunk count (s + q - 1) / q would overflow int64.
constexpr std::int64_t kMaxExtent = std::int64_t{1} << 62;

std::atomic<std::int64_t> g_max_case_bytes{kDefaultMaxCaseBytes};

// "12 bytes", "3.5 MiB", "16.0 GiB".
std::string byte_text(std::int64_t bytes) {
  if (bytes < (std::int64_t{1} << 20)) return std::to_string(bytes) + " bytes";
  char buffer[32];
  const bool mib = bytes < (std::int64_t{1} << 30);
  std::snprintf(buffer, sizeof buffer, "%.1f %s", std::ldexp(static_cast<double>(bytes), mib ? -20 : -30), mib ? "MiB" : "GiB");
  return buffer;
}

// The sizes the op takes, as they read in the problem string ("b2 s1000000000000 h8").
std::string sizes_text(const Problem& p) {
  Problem copy = p;
  std::string text;
  for (char dim : op_spec(p.op).dims) {
    if (!text.empty()) text.push_back(' ');
    text += dim + std::to_string(*dim_field(copy, dim));
  }
  if (p.sbi || p.slots != 0) text += " slots=" + std::to_string(p.slots);
  if (p.tokens > 0) text += " tokens=" + std::to_string(p.tokens);
  if (!p.rows.empty()) text += " rows=" + join_integers(p.rows);
  return text;
}

}  // namespace

std::int64_t max_case_bytes() { return g_max_case_bytes.load(); }

void set_max_case_bytes(std::int64_t bytes) {
  if (bytes <= 0) throw ArgumentError("max_case_bytes", "must be positive, got " + std::to_string(bytes));
  g_max_case_bytes.store(bytes);
}

std::optional<CaseSize> case_size(const Problem& p) {
  const OpSpec& spec = op_spec(p.op);
  CaseSize size;
  std::int64_t largest = -1;
  auto add = [&](const std::string& name, const Shape& shape) {
    std::int64_t count = 1;
    for (std::int64_t extent : shape)
      if (extent < 0 || __builtin_mul_overflow(count, extent, &count)) return false;
    if (__builtin_add_overflow(size.elements, count, &size.elements)) return false;
    if (count > largest) {
      largest = count;
      size.largest = name + " " + shape_string(shape);
    }
    return true;
  };
  for (const InputRole& role : spec.inputs)
    if ((!role.present || role.present(p)) && !add(role.name, role.shape(p))) return std::nullopt;
  for (const OutputRole& role : spec.outputs)
    if ((!role.present || role.present(p)) && !add(role.name, role.shape(p))) return std::nullopt;
  if (__builtin_mul_overflow(size.elements, std::int64_t{sizeof(double)}, &size.bytes)) return std::nullopt;
  return size;
}

std::optional<std::string> size_reason(const Problem& p, std::int64_t max_bytes) {
  const OpSpec& spec = op_spec(p.op);
  Problem copy = p;
  for (char dim : spec.dims) {
    const std::int64_t v = *dim_field(copy, dim);
    if (v <= 0) return std::nullopt;  // invalid_reason names it
    if (v > kMaxExtent)
      return concat({"size ", std::string(1, dim), " = ", std::to_string(v), " is beyond 2^62: no tensor extent can be that large"});
  }
  if (p.sbi && p.slots > kMaxExtent) return "slots = " + std::to_string(p.slots) + " is beyond 2^62";
  if (p.tokens > kMaxExtent) return "tokens = " + std::to_string(p.tokens) + " is beyond 2^62";
  for (std::int64_t n : p.rows)
    if (n > kMaxExtent) return "a row length of " + std::to_string(n) + " is beyond 2^62";
  const std::optional<CaseSize> size = case_size(p);
  if (!size)
    return concat({"sizes ", sizes_text(p), ": the element count of the case's tensors overflows int64"});
  if (size->bytes > max_bytes)
    return concat({"sizes ", sizes_text(p), ": the inputs and outputs hold ", std::to_string(size->elements),
                   " elements (the largest ", size->largest, "), ", byte_text(size->bytes), " as float64, over the limit of ",
                   byte_text(max_bytes), " (ssd-fuzz and ssd-golden raise it with --max-case-gib)"});
  return std::nullopt;
}


std::string_view layout_name(Layout layout) {
  switch (layout) {
    case Layout::zxbcdt: return "zxbcdt";
    case Layout::strided: return "strided";
    case Layout::contiguous: break;
  }
  return "contiguous";
}

// The names live in the OpSpecs.
std::string_view op_name(Op op) { return op_spec(op).name; }

std::string_view op_benchmark_name(Op op) { return op_spec(op).benchmark_name; }

Op parse_op(std::string_view text) {
  for (Op op : kAllOps)
    if (text == op_name(op) || text == op_benchmark_name(op)) return op;
  std::string known;
  for (Op op : kAllOps) {
    if (!known.empty()) known.append(", ");
    known.append(op_name(op));
  }
  throw ArgumentError("op", "unknown op '" + std::string(text) + "' (expected one of " + known +
                                ", or the benchmark names such as Mamba2Fwd)");
}

DType role_dtype(const Problem& p, std::string_view role) {
  if (auto it = p.dtypes.find(std::string(role)); it != p.dtypes.end()) return it->second;
  const InputRole* r = op_spec(p.op).input(role);
  if (r == nullptr) throw ArgumentError("role", "op " + std::string(op_name(p.op)) + " has no input '" + std::string(role) + "'");
  return r->follows_primary ? p.dtype : r->fixed;
}

std::string to_string(const Problem& p) {
  const OpSpec& spec = op_spec(p.op);
  std::ostringstream s;
  s << spec.name << ':' << dtype_name(p.dtype);
  Problem copy = p;
  for (char dim : spec.dims) s << ' ' << dim << *dim_field(copy, dim);
  if (p.dt_bias) s << " +dt_bias";
  if (p.softplus) s << " +softplus";
  if (p.dt_limit) s << " limit=" << format_number(p.dt_limit->lo) << ',' << format_number(p.dt_limit->hi);
  if (p.D == DMode::per_head) s << " +D";
  if (p.D == DMode::per_head_dim) s << " +Dhp";
  if (p.z) s << " +z";
  if (p.init) s << " +init";
  if (p.causal) s << " +causal";
  if (p.sbi) s << " +sbi";
  if (p.tie) s << " +tie";
  if (p.dst) s << " +dst";
  if (p.spec) s << " +spec";
  if (p.accepted) s << " +accepted";
  if (p.nowrite) s << " +nowrite";
  if (p.inter) s << " +inter";
  if (p.varlen) s << " +varlen";
  if (p.far) s << " +far";
  if (p.farslots) s << " +farslots";
  if (p.seq.kind != SeqSpec::Kind::none) s << ' ' << format_seq(p.seq);
  if (p.sbi || p.slots != 0) s << " slots=" << p.slots;  // every value the struct holds
  if (p.tokens > 0) s << " tokens=" << p.tokens;
  if (!p.rows.empty()) s << " rows=" << join_integers(p.rows);
  if (p.pad != -1) s << " pad=" << p.pad;
  if (p.layout != Layout::contiguous) s << " layout=" << layout_name(p.layout);
  for (const auto& role : spec.inputs)
    if (auto it = p.dtypes.find(role.name); it != p.dtypes.end()) s << ' ' << role.name << '=' << dtype_name(it->second);
  if (spec.takes_flag("state"))
    if (auto it = p.dtypes.find("state"); it != p.dtypes.end()) s << " state=" << dtype_name(it->second);
  if (auto it = p.dtypes.find("out"); it != p.dtypes.end()) s << " out=" << dtype_name(it->second);
  if (p.dots == DotPrecision::tf32) s << " dots=tf32";
  if (p.fill != spec.fills.front()) s << " fill=" << p.fill;
  s << " seed=" << p.seed;
  return s.str();
}

Problem parse_problem(std::string_view text) {
  std::vector<std::string_view> tokens;
  for (std::size_t i = 0; i < text.size();) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t') ++j;
    if (j > i) tokens.push_back(text.substr(i, j - i));
    i = j;
  }
  if (tokens.empty()) throw ArgumentError("problem", "empty problem string");

  Problem p;
  const auto colon = tokens[0].find(':');
  if (colon == std::string_view::npos)
    bad_token(tokens[0], "the first token must be <op>:<dtype>, e.g. chunk_scan:bf16");
  try {
    p.op = parse_op(tokens[0].substr(0, colon));
  } catch (const ArgumentError& e) {
    bad_token(tokens[0], e.what() + std::string_view(e.what()).find(':') + 2);
  }
  p.dtype = parse_dtype(tokens[0].substr(colon + 1), "problem");
  const OpSpec& spec = op_spec(p.op);
  p.fill = std::string(spec.fills.front());

  std::vector<std::string> seen;
  auto once = [&](std::string_view token, std::string key) {
    for (const auto& k : seen)
      if (k == key) bad_token(token, "given twice");
    seen.push_back(std::move(key));
  };
  auto flag_allowed = [&](std::string_view token, std::string_view flag) {
    if (!spec.takes_flag(flag)) bad_token(token, std::string(spec.name) + " does not take this option");
  };

  bool have_seed = false;
  std::string_view slots_token, pad_token, rows_token;  // checked against their flags once every token is read
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    const std::string_view t = tokens[i];
    if (t[0] == '+') {
      const std::string_view flag = t.substr(1);
      once(t, concat({"+", flag == "Dhp" ? std::string_view("D") : flag}));
      if (flag != "far") flag_allowed(t, flag);  // +far: every op (a property of the layout)
      if (flag == "dt_bias") p.dt_bias = true;
      else if (flag == "softplus") p.softplus = true;
      else if (flag == "D") p.D = DMode::per_head;
      else if (flag == "Dhp") p.D = DMode::per_head_dim;
      else if (flag == "z") p.z = true;
      else if (flag == "init") p.init = true;
      else if (flag == "causal") p.causal = true;
      else if (flag == "sbi") p.sbi = true;
      else if (flag == "tie") p.tie = true;
      else if (flag == "dst") p.dst = true;
      else if (flag == "spec") p.spec = true;
      else if (flag == "accepted") p.accepted = true;
      else if (flag == "nowrite") p.nowrite = true;
      else if (flag == "inter") p.inter = true;
      else if (flag == "varlen") p.varlen = true;
      else if (flag == "far") p.far = true;
      else if (flag == "farslots") p.farslots = true;
      else bad_token(t, "unknown flag");
      continue;
    }
    const auto eq = t.find('=');
    if (eq == std::string_view::npos) {
      // A size: one letter followed by an integer.
      std::int64_t* field = t.size() >= 2 ? dim_field(p, t[0]) : nullptr;
      if (field == nullptr) bad_token(t, "not a size (b s h p g n q d followed by a number), flag (+x) or key=value");
      if (!spec.takes_dim(t[0])) bad_token(t, std::string(spec.name) + " has no size '" + t[0] + "'");
      once(t, std::string(1, t[0]));
      *field = parse_integer(t, t.substr(1));
      continue;
    }
    const std::string key(t.substr(0, eq));
    const std::string_view value = t.substr(eq + 1);
    once(t, concat({key, "="}));
    if (key == "seed") {
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), p.seed);
      if (ec != std::errc() || end != value.data() + value.size() || value.empty())
        bad_token(t, "the seed must be an unsigned 64-bit integer");
      have_seed = true;
    } else if (key == "limit") {
      flag_allowed(t, "limit");
      const auto comma = value.find(',');
      if (comma == std::string_view::npos) bad_token(t, "expected limit=<lo>,<hi>");
      p.dt_limit = DtLimit{parse_number(t, value.substr(0, comma)), parse_number(t, value.substr(comma + 1))};
    } else if (key == "seq") {
      flag_allowed(t, "seq");
      p.seq = parse_seq(t, value);
    } else if (key == "slots") {
      flag_allowed(t, "slots");
      p.slots = parse_integer(t, value);
      slots_token = t;
    } else if (key == "tokens") {
      flag_allowed(t, "tokens");
      p.tokens = parse_integer(t, value);
      if (p.tokens < 1) bad_token(t, "tokens must be at least 1 (leave it out for the one-token layout)");
    } else if (key == "rows") {
      flag_allowed(t, "rows");
      for (std::size_t from = 0;;) {
        const std::size_t comma = value.find(',', from);
        const std::int64_t n = parse_integer(t, value.substr(from, comma == std::string_view::npos ? comma : comma - from));
        if (n < 0) bad_token(t, "a row length must be non-negative");
        p.rows.push_back(n);
        if (comma == std::string_view::npos) break;
        from = comma + 1;
      }
      rows_token = t;
    } else if (key == "pad") {
      flag_allowed(t, "pad");
      p.pad = parse_integer(t, value);
      if (p.pad < -1) bad_token(t, "pad must be -1 or a slot id");
      pad_token = t;
    } else if (key == "layout") {
      if (value == "contiguous") p.layout = Layout::contiguous;
      else if (value == "strided") p.layout = Layout::strided;
      else if (value == "zxbcdt") {
        if (spec.zxbcdt.empty())
          bad_token(t, std::string(spec.name) + " takes no zxbcdt views (only mamba2, recurrent, chunk_state and chunk_scan do)");
        p.layout = Layout::zxbcdt;
      } else {
        bad_token(t, "expected layout=contiguous, layout=zxbcdt or layout=strided");
      }
    } else if (key == "dots") {
      flag_allowed(t, "dots");
      if (value == "tf32") p.dots = DotPrecision::tf32;
      else if (value == "ieee") p.dots = DotPrecision::ieee;
      else bad_token(t, "expected dots=ieee or dots=tf32");
    } else if (key == "fill") {
      bool known = false;
      for (auto f : spec.fills) known = known || f == value;
      if (!known) bad_token(t, "unknown fill regime for " + std::string(spec.name));
      p.fill = std::string(value);
    } else if (key == "state" && spec.takes_flag("state")) {
      p.dtypes[key] = parse_dtype(value, "problem");
    } else if (key == "out") {
      flag_allowed(t, "out");
      p.dtypes[key] = parse_dtype(value, "problem");
    } else if (const InputRole* role = spec.input(key)) {
      if (!role->overridable) bad_token(t, "the dtype of '" + key + "' is fixed by the contract");
      p.dtypes[key] = parse_dtype(value, "problem");
    } else {
      bad_token(t, "unknown key '" + key + "' for " + std::string(spec.name));
    }
  }
  if (!have_seed) throw ArgumentError("problem", "missing seed=<n> (every case names its seed)");
  // Keys that only say something about the slot tables of +sbi: without it no tensor shows them,
  // so no kernel could refuse the case, and the problem would not mean what it reads.
  if (!p.sbi && !slots_token.empty()) bad_token(slots_token, "slots= needs +sbi (without it the state has b rows)");
  if (!p.sbi && !pad_token.empty()) bad_token(pad_token, "pad= needs +sbi (it names a slot of the slot table)");
  if (!p.varlen && !rows_token.empty()) bad_token(rows_token, "rows= needs +varlen (it gives the rows' token counts)");
  return p;
}

}  // namespace ssd

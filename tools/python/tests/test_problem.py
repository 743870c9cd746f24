"""Problems, fuzz cases and shrink candidates through the C API (no numpy needed)."""
import pytest

import ssd_suite
from ssd_suite import Problem


def test_canonical_string_round_trip():
    # docs/problem-string.md section 3: short op name, canonical order, numbers reprinted,
    # fill=default dropped.
    p = Problem("SSDChunkCumsumFwd:bf16 seed=6 A=bf16 q7 fill=default limit=-1e-1,2E-1 b1 s30 +dt_bias h2")
    assert str(p) == "chunk_cumsum:bf16 b1 s30 h2 q7 +dt_bias limit=-0.1,0.2 A=bf16 seed=6"
    assert Problem(str(p)) == p
    assert p.op == "chunk_cumsum" and p.dtype == "bf16" and p.seed == 6
    assert p.sizes == {"b": 1, "s": 30, "h": 2, "q": 7}
    assert p.flags == {"dt_bias"} and p.dt_limit == (-0.1, 0.2)
    assert p.valid and p.invalid_reason is None


def test_defaults_and_flags():
    p = Problem("mamba2:f16 b2 s37 h4 p8 g4 n8 q16 +dt_bias +softplus +Dhp +init seed=3")
    assert p.flags == {"dt_bias", "softplus", "Dhp", "init"}
    assert p.dt_limit == (0.0, float("inf"))  # contract section 1.3: the default clamp
    assert list(p.sizes) == list("bshpgnq")


def test_parse_error_names_the_argument_and_token():
    with pytest.raises(ssd_suite.SsdArgumentError, match=r"ssd_capi_problem_parse: argument 'problem': token 'x5'"):
        Problem("chunk_cumsum:f32 b1 s4 h1 q2 x5 seed=1")
    with pytest.raises(TypeError, match="argument 'text'"):
        Problem(5)


def test_invalid_problem_parses_with_its_reason():
    p = Problem("chunk_state:f32 b1 s8 h3 p2 g2 n2 q4 seed=1")
    assert not p.valid and "H % G != 0" in p.invalid_reason


def test_shrink_candidates_are_valid_smaller_steps():
    p = Problem("chunk_scan:bf16 b2 s37 h4 p8 g4 n8 q16 +Dhp +z seq=rand seed=3")
    candidates = ssd_suite.shrink_candidates(p)
    assert len(candidates) > 3
    for c in candidates:
        assert c.valid and c != p and Problem(str(c)) == c
        assert all(c.sizes[k] <= p.sizes[k] for k in p.sizes)
    assert "chunk_scan:bf16 b2 s37 h4 p8 g4 n8 q16 +Dhp seq=rand seed=3" in [str(c) for c in candidates]
    # Nothing to drop and every size 1: no smaller problem exists.
    assert ssd_suite.shrink_candidates("chunk_cumsum:f32 b1 s1 h1 q1 seed=0") == []


def test_campaign_cases_are_deterministic_and_of_the_shard():
    a = [ssd_suite.campaign_problem("recurrent", k, seed=42, shard=(1, 3), dtypes=["bf16"]) for k in (1, 4, 7)]
    b = [ssd_suite.campaign_problem("SSDRecurrentFwd", k, seed=42, shard=(1, 3), dtypes=["bf16"]) for k in (1, 4, 7)]
    assert a == b and all(p.op == "recurrent" and p.dtype == "bf16" and p.valid for p in a)
    with pytest.raises(ssd_suite.SsdArgumentError, match=r"argument 'k': 2 is not a case of shard 1/3"):
        ssd_suite.campaign_problem("recurrent", 2, seed=42, shard=(1, 3))


def test_op_names():
    assert ssd_suite.op_names() == ["mamba2", "chunk_cumsum", "chunk_coupling", "chunk_state", "state_passing",
                                    "chunk_scan", "recurrent", "discretize_segsum"]
    assert ssd_suite.capi_version() == 2


def test_a_missing_library_is_reported_with_its_path(tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, SSD_CAPI_LIBRARY=str(tmp_path / "libssd-capi.so"), PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", "import ssd_suite\nssd_suite.Problem('chunk_cumsum:f32 b1 s1 h1 q1 seed=0')"],
                          env=env, capture_output=True, text=True)
    assert done.returncode != 0
    assert "cannot load libssd-capi.so" in done.stderr and str(tmp_path / "libssd-capi.so") + ": not found" in done.stderr


def test_option_reads_a_key_value_token_or_none():
    p = ssd_suite.Problem("mamba2:f16 b1 s37 h2 p4 g2 n8 q16 +softplus +init state=bf16 seed=14")
    assert p.option("state") == "bf16" and p.option("seed") == "14"
    assert p.option("dots") is None and p.option("sta") is None  # a prefix of a key is not the key

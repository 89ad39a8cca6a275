"""core.lessons.vectors against the curriculum's hand-worked numbers and reference implementations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import distance as scipy_distance

from core.lessons import vectors as v

APPLE = [0.8, 0.2, 0.1]
BANANA = [0.7, 0.3, 0.1]
PLANE = [0.1, 0.8, 0.8]


# --- the seeds' worked example, by hand --------------------------------------------------


def test_apple_banana_worked_by_hand() -> None:
    work = v.show_work(APPLE, BANANA)
    # 0.8×0.7 + 0.2×0.3 + 0.1×0.1 = 0.56 + 0.06 + 0.01
    assert work.products == pytest.approx((0.56, 0.06, 0.01))
    assert work.dot == pytest.approx(0.63)
    assert work.norm_a == pytest.approx(math.sqrt(0.69))  # ≈ 0.831
    assert work.norm_b == pytest.approx(math.sqrt(0.59))  # ≈ 0.768
    assert round(work.norm_a, 3) == 0.831 and round(work.norm_b, 3) == 0.768
    assert work.cosine == pytest.approx(0.63 / math.sqrt(0.69 * 0.59))
    assert round(work.cosine, 2) == 0.99
    assert work.squared_differences == pytest.approx((0.01, 0.01, 0.0))
    assert work.distance == pytest.approx(math.sqrt(0.02))
    assert round(work.distance, 2) == 0.14


def test_apple_plane_worked_by_hand() -> None:
    # dot = 0.08 + 0.16 + 0.08 = 0.32; |飞机| = √1.29 ≈ 1.136
    assert v.show_work(APPLE, PLANE).dot == pytest.approx(0.32)
    assert round(v.l2_norm(PLANE), 3) == 1.136
    cosine = v.cosine_similarity(APPLE, PLANE)
    assert cosine == pytest.approx(0.32 / math.sqrt(0.69 * 1.29))
    assert round(cosine, 2) == 0.34
    d = v.euclidean_distance(APPLE, PLANE)
    assert d == pytest.approx(math.sqrt(0.49 + 0.36 + 0.49))  # √1.34
    assert round(d, 2) == 1.16


def test_seed_two_d_examples() -> None:
    assert v.cosine_similarity([3, 4], [30, 40]) == pytest.approx(1.0)
    assert v.cosine_similarity([1, 0], [0, 1]) == pytest.approx(0.0)
    assert v.cosine_similarity([1, 2], [-1, -2]) == pytest.approx(-1.0)
    assert v.euclidean_distance([1, 1], [4, 5]) == pytest.approx(5.0)
    assert round(v.euclidean_distance([1, 1], [1.5, 1.2]), 2) == 0.54


def test_pairwise_measures_order_and_values() -> None:
    pairs = v.pairwise_measures({"苹果": APPLE, "香蕉": BANANA, "飞机": PLANE})
    assert [(p.first, p.second) for p in pairs] == [("苹果", "香蕉"), ("苹果", "飞机"), ("香蕉", "飞机")]
    assert [round(p.cosine, 2) for p in pairs[:2]] == [0.99, 0.34]
    assert [round(p.distance, 2) for p in pairs[:2]] == [0.14, 1.16]


def test_normalised_distance_follows_the_cosine() -> None:
    raw = v.pairwise_measures({"a": APPLE, "b": BANANA, "c": PLANE})
    unit = v.pairwise_measures({"a": APPLE, "b": BANANA, "c": PLANE}, normalise=True)
    for before, after in zip(raw, unit):
        assert after.cosine == pytest.approx(before.cosine)  # direction unchanged
        assert after.distance == pytest.approx(v.unit_distance_from_cosine(after.cosine))
    # A long and a short vector in the same direction: far apart, yet identical once normalised.
    far = v.pairwise_measures({"short": [1, 1], "long": [100, 100]})[0]
    same = v.pairwise_measures({"short": [1, 1], "long": [100, 100]}, normalise=True)[0]
    assert far.distance > 100 and same.distance == pytest.approx(0.0)


def test_normalise() -> None:
    assert v.l2_normalise([3, 4]) == pytest.approx([0.6, 0.8])
    with pytest.raises(ValueError, match="zero vector"):
        v.l2_normalise([0, 0])


# --- against scipy --------------------------------------------------------------------

finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(st.lists(finite, min_size=n, max_size=n),
                                                       st.lists(finite, min_size=n, max_size=n))))
def test_matches_scipy(pair: tuple[list[float], list[float]]) -> None:
    a, b = pair
    assert v.euclidean_distance(a, b) == pytest.approx(scipy_distance.euclidean(a, b), abs=1e-9)
    if np.linalg.norm(a) > 1e-6 and np.linalg.norm(b) > 1e-6:
        cosine = v.cosine_similarity(a, b)
        assert -1.0 <= cosine <= 1.0
        assert cosine == pytest.approx(1.0 - scipy_distance.cosine(a, b), abs=1e-7)


# --- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([], [], "empty"),
        ([1, 2], [1, 2, 3], "different lengths"),
        ([1, float("nan")], [1, 2], "NaN"),
        ([1, float("inf")], [1, 2], "infinity"),
        ("abc", [1, 2, 3], "not text"),
        ([[1, 2]], [[1, 2]], "one row"),
        (["x", 1], [1, 2], "only numbers"),
        ([0, 0], [1, 2], "zero vector"),
    ],
)
def test_bad_vectors_say_what_is_wrong(a: object, b: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        v.cosine_similarity(a, b)


def test_huge_vector_refused() -> None:
    with pytest.raises(ValueError, match="limit"):
        v.as_vector(np.zeros(v.MAX_VECTOR_DIM + 1))


def test_pairwise_needs_two_and_same_lengths() -> None:
    with pytest.raises(ValueError, match="two"):
        v.pairwise_measures({"a": [1, 2]})
    with pytest.raises(ValueError, match="same length"):
        v.pairwise_measures({"a": [1, 2], "b": [1, 2, 3]})


# --- PCA --------------------------------------------------------------------------------


def test_pca_matches_numpy_svd() -> None:
    rng = np.random.default_rng(0)
    table = rng.normal(size=(200, 16)) @ np.diag(np.linspace(3, 0.1, 16))
    proj = v.pca_3d(table)
    centred = table - table.mean(axis=0)
    _, singular, vt = np.linalg.svd(centred, full_matrices=False)
    expected_ratio = singular[:3] ** 2 / np.sum(singular**2)
    assert proj.explained_variance_ratio == pytest.approx(expected_ratio, rel=1e-9)
    # Same axes up to sign.
    for axis in range(3):
        assert abs(proj.components[axis] @ vt[axis]) == pytest.approx(1.0)
        expected = centred @ vt[axis]
        assert np.allclose(np.abs(proj.coords[:, axis]), np.abs(expected))
    # Deterministic: the page caches it, but two runs must agree anyway.
    assert np.array_equal(v.pca_3d(table).coords, proj.coords)


def test_pca_gives_scikit_learns_exact_pca_signs_included() -> None:
    """numpy's SVD with scikit-learn's sign rule: the same picture as PCA(svd_solver="full"),
    without importing scikit-learn and SciPy into the server."""
    from sklearn.decomposition import PCA

    rng = np.random.default_rng(5)
    table = rng.normal(size=(300, 12)) @ np.diag(np.linspace(4, 0.2, 12)) + 3.0
    for fit_rows in (None, list(range(0, 300, 4))):
        proj = v.pca_3d(table, fit_rows=fit_rows)
        fitted = table if fit_rows is None else table[fit_rows]
        ref = PCA(n_components=3, svd_solver="full").fit(fitted)
        scale = np.abs(ref.transform(table)).max()
        assert np.allclose(proj.coords, ref.transform(table), rtol=0, atol=1e-9 * scale)
        assert np.allclose(proj.components, ref.components_, rtol=0, atol=1e-9)
        assert np.allclose(proj.explained_variance_ratio, ref.explained_variance_ratio_, rtol=1e-9, atol=0)
        assert np.allclose(proj.mean, ref.mean_, rtol=1e-12, atol=1e-12)


def test_pca_fitted_to_some_rows_projects_all_rows() -> None:
    rng = np.random.default_rng(2)
    table = rng.normal(size=(60, 6))
    subset = list(range(10))
    table[10:, 0] *= 50  # the whole table's strongest direction is dimension 0 ...
    table[subset, 1] += np.linspace(-30, 30, 10)  # ... but the subset varies mostly along dimension 1
    whole = v.pca_3d(table)
    part = v.pca_3d(table, fit_rows=subset)
    assert abs(whole.components[0][0]) > 0.99
    assert abs(part.components[0][1]) > 0.9
    assert part.coords.shape == (60, 3)
    centred = table - table[subset].mean(axis=0)
    assert np.allclose(part.coords, centred @ part.components.T)
    with pytest.raises(ValueError, match="row numbers"):
        v.pca_3d(table, fit_rows=[0, 99])
    with pytest.raises(ValueError, match="two rows"):
        v.pca_3d(table, fit_rows=[3, 3])


def test_pca_of_tiny_table_pads_missing_axes() -> None:
    proj = v.pca_3d([[0.0, 1.0], [1.0, 0.0]])  # two rows: one direction of variance at most
    assert proj.coords.shape == (2, 3)
    assert proj.explained_variance_ratio[2] == 0.0
    with pytest.raises(ValueError, match="two rows"):
        v.pca_3d([[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="NaN"):
        v.pca_3d([[1.0, np.nan], [0.0, 1.0]])


# --- neighbours and analogies -------------------------------------------------------------


def test_nearest_neighbours_by_cosine_not_length() -> None:
    table = np.array([[1.0, 0.0], [100.0, 1.0], [0.0, 1.0], [0.7, 0.7]])
    found = v.neighbours_of_token(table, 0, k=3)
    assert [n.token_id for n in found] == [1, 3, 2]  # the long row 1 is nearest in direction
    assert found[0].cosine == pytest.approx(100 / math.hypot(100, 1))
    assert found[2].cosine == pytest.approx(0.0)


def test_neighbours_ties_break_by_id_and_k_is_checked() -> None:
    table = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])
    assert [n.token_id for n in v.nearest_neighbours(table, [1, 0], k=5)] == [0, 1, 2]
    with pytest.raises(ValueError, match="k must"):
        v.nearest_neighbours(table, [1, 0], k=0)
    with pytest.raises(ValueError, match="outside"):
        v.neighbours_of_token(table, 7)
    with pytest.raises(ValueError, match="zero vector"):
        v.nearest_neighbours(table, [0, 0])


def test_analogy_recovers_a_planted_relation() -> None:
    # country and capital differ by one shared "capital-of" direction.
    rng = np.random.default_rng(1)
    d = 32
    capital_of = rng.normal(size=d)
    countries = rng.normal(size=(5, d)) * 3
    capitals = countries + capital_of
    noise = rng.normal(size=(40, d)) * 3
    table = np.vstack([countries, capitals, noise])  # ids 0-4 countries, 5-9 capitals
    for a_country, c_country in [(0, 1), (2, 3), (4, 0)]:
        # capital(a) − a + c ≈ capital(c)
        result = v.analogy(table, 5 + a_country, a_country, c_country, k=3)
        assert result.neighbours[0].token_id == 5 + c_country
        assert {n.token_id for n in result.neighbours}.isdisjoint({5 + a_country, a_country, c_country})


def test_analogy_zero_query_is_explained() -> None:
    with pytest.raises(ValueError, match="zero vector"):
        v.analogy(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 0.0]]), 0, 1, 2)


# --- categories -------------------------------------------------------------------------


def test_token_categories() -> None:
    words = {"city": ["Paris", "巴黎"], "country": ["France", "法国"], "fruit": ["apple", "Paris"]}
    tokens = [" Paris", "巴黎", "法", " france", "的", "", " ", "apple"]
    assert v.token_categories(tokens, words) == ["city", "city", None, "country", None, None, None, "fruit"]


# --- contextual embeddings --------------------------------------------------------------


class CharTokenizer:
    """One token per character: enough to test word location without the real tokenizer."""

    def __init__(self, text: str) -> None:
        self.chars = sorted(set(text))

    def encode(self, text: str) -> list[int]:
        return [self.chars.index(ch) for ch in text]

    def decode(self, ids: list[int]) -> str:
        return "".join(self.chars[i] for i in ids)


def test_locate_word_single_and_multi_token() -> None:
    text = "我吃了一个苹果"
    tok = CharTokenizer(text)
    span = v.locate_word(tok.encode(text), tok.decode, "苹果")
    assert (span.first, span.last, span.single_token) == (5, 6, False)
    span = v.locate_word(tok.encode(text), tok.decode, "吃")
    assert span.single_token and span.last == 1


def test_locate_word_takes_last_occurrence_and_whole_tokens() -> None:
    pieces = ["I", " ate", " an", " apple", ".", " apple", " pie"]

    def decode(ids: list[int]) -> str:
        return "".join(pieces[i] for i in ids)

    span = v.locate_word(list(range(len(pieces))), decode, " apple ")  # surrounding spaces ignored
    assert (span.first, span.last) == (5, 5)
    assert v.locate_word(list(range(len(pieces))), decode, "te an").last == 2
    with pytest.raises(ValueError, match="does not occur"):
        v.locate_word(list(range(len(pieces))), decode, "banana")
    with pytest.raises(ValueError, match="empty"):
        v.locate_word([0], decode, "  ")


def _fake_trace(rows_by_stage: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return dict(rows_by_stage)


def test_contextual_similarity_reads_every_stage() -> None:
    stages = v.contextual_stages(2)
    assert stages == [("embed", None), ("resid_pre", 0), ("resid_mid", 0), ("resid_post", 0),
                      ("resid_mid", 1), ("resid_post", 1)]
    rng = np.random.default_rng(3)
    shared = rng.normal(size=(3, 8))
    names_ = ["hook_embed", "blocks.0.hook_resid_pre", "blocks.0.hook_resid_mid", "blocks.0.hook_resid_post",
              "blocks.1.hook_resid_mid", "blocks.1.hook_resid_post"]
    trace_a = {n: shared.copy() for n in names_}
    trace_b = {n: shared.copy() for n in names_}
    trace_b["blocks.1.hook_resid_post"] = -shared  # the last stage points the other way
    result = v.contextual_similarity(trace_a, trace_b, 2, 2, n_layer=2)
    assert [r.trace_name for r in result] == names_
    assert [round(r.cosine, 6) for r in result] == [1.0, 1.0, 1.0, 1.0, 1.0, -1.0]
    with pytest.raises(ValueError, match="outside"):
        v.contextual_similarity(trace_a, trace_b, 5, 2, n_layer=2)
    with pytest.raises(ValueError, match="no 'blocks.2"):
        v.contextual_similarity(trace_a, trace_b, 0, 0, n_layer=3)


def test_contextual_similarity_on_a_real_model() -> None:
    """Same word, different earlier context: identical embedding, different after attention."""
    import torch

    from core.engine.model import GPTConfig, build_model

    torch.set_num_threads(1)
    config = GPTConfig(n_layer=2, n_head=2, d_model=16, d_mlp=64, n_ctx=32, vocab_size=50)
    model = build_model(config, seed=0)
    _, trace_a = model.run_with_trace([3, 4, 5, 9])
    _, trace_b = model.run_with_trace([7, 8, 1, 9])  # token 9 at the same position 3
    result = v.contextual_similarity(trace_a, trace_b, 3, 3, n_layer=2)
    assert result[0].cosine == pytest.approx(1.0)  # same table row
    assert result[1].cosine == pytest.approx(1.0)  # same position too: same block input
    assert result[-1].cosine < 0.999  # attention mixed in different context


def test_find_token_id_prefers_the_in_sentence_spelling() -> None:
    vocab = ["<|endoftext|>", "Paris", " Paris", "巴黎", " apple"]
    assert v.find_token_id(vocab, "Paris") == 2
    assert v.find_token_id(vocab, " 巴黎 ") == 3
    assert v.find_token_id(vocab, "apple") == 4
    assert v.find_token_id(vocab, "banana") is None
    assert v.find_token_id(vocab, "") is None
    index = v.spelling_index(vocab)  # made once, reused: the same answers
    assert [v.find_token_id(vocab, w, index=index) for w in ("Paris", " 巴黎 ", "apple", "banana", "")] == [2, 3, 4, None, None]

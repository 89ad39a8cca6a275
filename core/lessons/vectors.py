"""Vectors and the geometry of meaning: similarity, projection, neighbours, analogies.

Everything the embeddings page computes lives here, as plain numpy (and scikit-learn for
PCA), so that it can be unit-tested against the curriculum's hand-worked numbers:

    苹果 = [0.8, 0.2, 0.1], 香蕉 = [0.7, 0.3, 0.1], 飞机 = [0.1, 0.8, 0.8]
    cos(苹果, 香蕉) ≈ 0.99   cos(苹果, 飞机) ≈ 0.34
    d(苹果, 香蕉)   ≈ 0.14   d(苹果, 飞机)   ≈ 1.16

Every function checks its input and raises ``ValueError`` with a message a page can show
as is (empty vectors, mismatched lengths, NaN, a zero vector that has no direction).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from core.engine import names

MAX_VECTOR_DIM = 100_000  # far above any model here; refuses absurd input before it costs memory


# --- single vectors ---------------------------------------------------------------------


def as_vector(values: object, what: str = "vector") -> np.ndarray:
    """Check and convert one vector to float64: non-empty, 1-D, finite.

    Example: as_vector([0.8, 0.2, 0.1]) -> array([0.8, 0.2, 0.1])
    """
    if isinstance(values, (str, bytes, bytearray)):
        raise ValueError(f"{what} must be a list of numbers, not text")
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must contain only numbers") from None
    if array.ndim != 1:
        raise ValueError(f"{what} must be one row of numbers, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{what} is empty")
    if array.size > MAX_VECTOR_DIM:
        raise ValueError(f"{what} has {array.size} numbers; the limit is {MAX_VECTOR_DIM}")
    if not np.isfinite(array).all():
        raise ValueError(f"{what} contains a missing value, NaN or infinity")
    return array


def _pair(a: object, b: object) -> tuple[np.ndarray, np.ndarray]:
    va, vb = as_vector(a, "first vector"), as_vector(b, "second vector")
    if va.shape != vb.shape:
        raise ValueError(f"the vectors have different lengths ({va.size} and {vb.size})")
    return va, vb


def l2_norm(v: object) -> float:
    """Length of a vector: the square root of the sum of squares.

    Example: l2_norm([3, 4]) -> 5.0
    """
    return float(np.linalg.norm(as_vector(v)))


def l2_normalise(v: object) -> np.ndarray:
    """Scale a vector to length 1, keeping its direction. A zero vector has no direction.

    Example: l2_normalise([3, 4]) -> array([0.6, 0.8])
    """
    vector = as_vector(v)
    length = float(np.linalg.norm(vector))
    if length == 0.0:
        raise ValueError("a zero vector has no direction and cannot be normalised")
    return vector / length


def cosine_similarity(a: object, b: object) -> float:
    """cos θ = a·b / (|a| |b|): 1 same direction, 0 unrelated (orthogonal), −1 opposite.

    Example: cosine_similarity([3, 4], [30, 40]) -> 1.0
    """
    va, vb = _pair(a, b)
    denominator = float(np.linalg.norm(va) * np.linalg.norm(vb))
    if denominator == 0.0:
        raise ValueError("cosine similarity is undefined for a zero vector (it has no direction)")
    # Clip: rounding can give 1.0000000000000002, which is not a cosine.
    return float(np.clip(np.dot(va, vb) / denominator, -1.0, 1.0))


def euclidean_distance(a: object, b: object) -> float:
    """Straight-line distance √Σ(aᵢ − bᵢ)².

    Example: euclidean_distance([1, 1], [4, 5]) -> 5.0
    """
    va, vb = _pair(a, b)
    return float(np.linalg.norm(va - vb))


def unit_distance_from_cosine(cosine: float) -> float:
    """Distance between two UNIT vectors whose cosine is given: |a − b| = √(2 − 2 cos θ).

    This is why the two measures agree after L2 normalisation: the distance is a
    decreasing function of the cosine, so both rank neighbours identically.

    Example: unit_distance_from_cosine(0.0) -> 1.4142135623730951
    """
    if not math.isfinite(cosine) or not -1.0 - 1e-9 <= cosine <= 1.0 + 1e-9:
        raise ValueError(f"a cosine lies in [-1, 1], got {cosine!r}")
    return math.sqrt(max(0.0, 2.0 - 2.0 * cosine))


@dataclass(frozen=True)
class DotProductWork:
    """The hand calculation of a cosine, step by step (what the seeds write out)."""

    products: tuple[float, ...]  # aᵢ·bᵢ
    dot: float
    norm_a: float
    norm_b: float
    cosine: float
    squared_differences: tuple[float, ...]  # (aᵢ − bᵢ)²
    distance: float


def show_work(a: object, b: object) -> DotProductWork:
    """Every intermediate of cos(a, b) and d(a, b), for a worked example on screen.

    Example: show_work([0.8, 0.2, 0.1], [0.7, 0.3, 0.1]).dot -> 0.63
    """
    va, vb = _pair(a, b)
    return DotProductWork(
        products=tuple(float(x) for x in va * vb),
        dot=float(np.dot(va, vb)),
        norm_a=float(np.linalg.norm(va)),
        norm_b=float(np.linalg.norm(vb)),
        cosine=cosine_similarity(va, vb),
        squared_differences=tuple(float(x) for x in (va - vb) ** 2),
        distance=euclidean_distance(va, vb),
    )


@dataclass(frozen=True)
class PairMeasure:
    """Both measures for one pair of named vectors."""

    first: str
    second: str
    cosine: float
    distance: float


def pairwise_measures(vectors: Mapping[str, object], normalise: bool = False) -> list[PairMeasure]:
    """Cosine and Euclidean distance for every pair, in the order the names were given.

    With ``normalise`` every vector is first scaled to length 1, so the distance becomes
    √(2 − 2 cos θ) and tells exactly the same story as the cosine.

    Example: pairwise_measures({"a": [1, 0], "b": [0, 1]})[0].cosine -> 0.0
    """
    if len(vectors) < 2:
        raise ValueError("need at least two vectors to compare")
    prepared: dict[str, np.ndarray] = {}
    for name, values in vectors.items():
        vector = as_vector(values, f"vector {name!r}")
        prepared[name] = l2_normalise(vector) if normalise else vector
    sizes = {v.size for v in prepared.values()}
    if len(sizes) > 1:
        raise ValueError(f"all vectors must have the same length, got lengths {sorted(sizes)}")
    return [
        PairMeasure(a, b, cosine_similarity(prepared[a], prepared[b]), euclidean_distance(prepared[a], prepared[b]))
        for a, b in combinations(prepared, 2)
    ]


# --- whole embedding tables -------------------------------------------------------------


def as_matrix(matrix: object, what: str = "embedding matrix") -> np.ndarray:
    """Check a 2-D finite table (rows = tokens) and return it as float64.

    Example: as_matrix([[1, 0], [0, 1]]).shape -> (2, 2)
    """
    array = np.asarray(matrix, dtype=np.float64)
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"{what} must be a non-empty 2-D table, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{what} contains NaN or infinity")
    return array


@dataclass(frozen=True)
class Projection:
    """A PCA projection of every row to 3 coordinates."""

    coords: np.ndarray  # (rows, 3)
    explained_variance_ratio: np.ndarray  # (3,) share of the total variance each axis keeps
    components: np.ndarray  # (3, d) the principal directions
    mean: np.ndarray  # (d,) subtracted before projecting


LARGE_PCA_CELLS = 4_000_000  # above this many numbers (e.g. 8k tokens x 512) the PCA is randomised


def map_sample(vocab_size: int, keep: Sequence[int] = (), limit: int = 4000, seed: int = 0) -> list[int] | None:
    """Token ids to draw in a 3-D map of a big vocabulary: a fixed random sample plus ``keep``.

    None when the whole vocabulary is small enough to draw (``vocab_size <= limit``).

    Example: len(map_sample(150_000, [5], limit=100)) -> 101 (or 100 if 5 was drawn anyway)
    """
    if vocab_size <= limit:
        return None
    drawn = np.random.default_rng(seed).choice(vocab_size, size=limit, replace=False)
    return sorted(set(int(i) for i in drawn) | {int(i) for i in keep if 0 <= int(i) < vocab_size})


def _exact_pca(fitted: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(components (n, d), explained-variance ratio (n,), mean (d,)) of an exact PCA: what
    scikit-learn's ``PCA(svd_solver="full")`` computes (LAPACK SVD of the centred rows, each
    direction's sign chosen so its largest entry is positive), without importing scikit-learn
    and SciPy (~80 MB of a server process' memory for one small SVD per model)."""
    mean = fitted.mean(axis=0)
    _, singular, vt = np.linalg.svd(fitted - mean, full_matrices=False)
    largest = np.argmax(np.abs(vt), axis=1)
    signs = np.sign(vt[np.arange(vt.shape[0]), largest])
    vt *= np.where(signs == 0, 1.0, signs)[:, None]
    variance = singular**2 / max(1, fitted.shape[0] - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = variance / variance.sum()
    return vt[:n].copy(), ratio[:n].copy(), mean


def pca_3d(matrix: object, fit_rows: Sequence[int] | None = None) -> Projection:
    """Project rows onto the 3 directions of largest variance (scikit-learn's exact PCA).

    ``fit_rows`` chooses which rows define the directions (default: all); every row is then
    projected onto them. Fitting to a meaningful subset (say, the words of known categories)
    shows their structure even when the whole table's strongest direction is about
    something else, such as frequent versus never-seen tokens.

    Fewer than 3 usable directions (tiny tables) leave the missing axes at 0 with 0 %
    variance, so a chart always has three axes.

    Example: pca_3d(np.random.default_rng(0).normal(size=(50, 8))).coords.shape -> (50, 3)
    """
    from threadpoolctl import threadpool_limits  # ships with scikit-learn

    table = as_matrix(matrix)
    rows, dims = table.shape
    if fit_rows is None:
        fitted = table
    else:
        chosen = np.asarray(list(fit_rows), dtype=np.int64)
        if chosen.ndim != 1 or chosen.size == 0:
            raise ValueError("fit_rows must list at least two row numbers")
        if chosen.min() < 0 or chosen.max() >= rows:
            raise ValueError(f"fit_rows must be row numbers in [0, {rows})")
        fitted = table[np.unique(chosen)]
    if fitted.shape[0] < 2:
        raise ValueError("PCA needs at least two rows")
    n = min(3, fitted.shape[0], dims)
    # "full" = exact LAPACK SVD: deterministic, and the table is small (vocab × d_model).
    # One BLAS thread: for a matrix this size, threads only fight each other (measured 10×
    # slower with two OpenBLAS threads on a busy two-core machine).
    # A real vocabulary (50k-150k rows) uses randomised PCA: seconds instead of minutes, and
    # seeded, so the same table always gives the same picture.
    with threadpool_limits(limits=1, user_api="blas"):
        if fitted.size <= LARGE_PCA_CELLS:  # the exact SVD in numpy (the same numbers as scikit-learn's "full")
            found, found_ratio, mean = _exact_pca(fitted, n)
        else:
            from sklearn.decomposition import PCA  # imported here: scikit-learn is slow to import and large

            pca = PCA(n_components=n, svd_solver="randomized", random_state=0).fit(fitted)
            found, found_ratio, mean = pca.components_, pca.explained_variance_ratio_, pca.mean_.copy()
        coords = np.zeros((rows, 3))
        coords[:, :n] = table @ found.T - mean @ found.T  # scikit-learn's transform
    ratio = np.zeros(3)
    ratio[:n] = np.nan_to_num(found_ratio)
    components = np.zeros((3, dims))
    components[:n] = found
    return Projection(coords=coords, explained_variance_ratio=ratio, components=components, mean=mean)


@dataclass(frozen=True)
class Neighbour:
    token_id: int
    cosine: float


def _unit_rows(table: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(table, axis=1, keepdims=True)
    return table / np.where(norms == 0.0, 1.0, norms)  # a zero row stays zero (cosine 0 with all)


def nearest_neighbours(
    matrix: object, query: object, k: int = 10, exclude: Sequence[int] = ()
) -> list[Neighbour]:
    """The k rows with the highest cosine similarity to ``query`` (ties: lower id first).

    Example: nearest_neighbours(np.eye(3), [1, 0.1, 0], k=1)[0].token_id -> 0
    """
    table = as_matrix(matrix)
    scores = _unit_rows(table) @ _unit_query(query, table.shape[1], k)  # (rows,) cosine with every row
    return _top_k(scores, int(k), exclude)


def _unit_query(query: object, width: int, k: object) -> np.ndarray:
    """The query scaled to length 1, after checking it fits rows of ``width`` and that k is a count.

    Example: _unit_query([3.0, 4.0], 2, 1) -> array([0.6, 0.8])
    """
    vector = as_vector(query, "query vector")
    if vector.size != width:
        raise ValueError(f"the query has {vector.size} numbers but the rows have {width}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive whole number, got {k!r}")
    length = float(np.linalg.norm(vector))
    if length == 0.0:
        raise ValueError("the query is a zero vector: it has no direction to compare")
    return vector / length


def _top_k(scores: np.ndarray, k: int, exclude: Sequence[int] = ()) -> list[Neighbour]:
    """The k highest scores outside ``exclude`` (ties: lower id first), without sorting every row.

    Exact: every row scoring at least the (k + len(exclude))-th best is a candidate, so ties
    at the cut are all kept before the final ordered pick.
    """
    keep = np.ones(scores.shape[0], dtype=bool)
    for token_id in exclude:
        if 0 <= int(token_id) < keep.size:
            keep[int(token_id)] = False
    wanted = k + len(exclude)
    if wanted < scores.shape[0]:
        cut = np.partition(scores, scores.shape[0] - wanted)[scores.shape[0] - wanted]
        keep &= scores >= cut
    candidates = np.flatnonzero(keep)
    order = candidates[np.lexsort((candidates, -scores[candidates]))][:k]
    return [Neighbour(int(i), float(np.clip(scores[i], -1.0, 1.0))) for i in order]


class CosineIndex:
    """Unit-length rows of a table, made once: neighbours and analogies cost one mat-vec each.

    For a real vocabulary (150k x 896) re-normalising the table on every question would copy
    a gigabyte; this keeps one normalised copy (float32 for big tables, float64 otherwise, so
    small tables give exactly what ``neighbours_of_token`` / ``analogy`` give).

    Example: CosineIndex(np.eye(3)).neighbours_of_token(0, k=1)[0].cosine -> 0.0
    """

    def __init__(self, matrix: object) -> None:
        array = np.asarray(matrix)
        dtype = np.float64 if array.size <= LARGE_PCA_CELLS else np.float32
        table = np.asarray(array, dtype=dtype)
        if table.ndim != 2 or table.shape[0] == 0 or table.shape[1] == 0:
            raise ValueError(f"embedding matrix must be a non-empty 2-D table, got shape {table.shape}")
        if not np.isfinite(table).all():
            raise ValueError("embedding matrix contains NaN or infinity")
        self.unit = _unit_rows(table)
        self.unit.flags.writeable = False

    def nearest(self, query: object, k: int = 10, exclude: Sequence[int] = ()) -> list[Neighbour]:
        unit_query = _unit_query(query, self.unit.shape[1], k).astype(self.unit.dtype)
        return _top_k(self.unit @ unit_query, int(k), exclude)

    def neighbours_of_token(self, token_id: int, k: int = 10) -> list[Neighbour]:
        return self.nearest(_row(self.unit, token_id), k=k, exclude=[int(token_id)])

    def analogy(self, a: int, b: int, c: int, k: int = 5) -> list[Neighbour]:
        query = _row(self.unit, a).astype(np.float64) - _row(self.unit, b) + _row(self.unit, c)
        if float(np.linalg.norm(query)) == 0.0:
            raise ValueError("a − b + c is the zero vector here (for example a = b and c is zero); pick other tokens")
        return self.nearest(query, k=k, exclude=[int(a), int(b), int(c)])


def _row(table: np.ndarray, token_id: int) -> np.ndarray:
    if isinstance(token_id, bool) or not isinstance(token_id, (int, np.integer)):
        raise ValueError(f"token id must be a whole number, got {token_id!r}")
    if not 0 <= int(token_id) < table.shape[0]:
        raise ValueError(f"token id {token_id} is outside the vocabulary [0, {table.shape[0]})")
    return table[int(token_id)]


def neighbours_of_token(matrix: object, token_id: int, k: int = 10) -> list[Neighbour]:
    """Nearest neighbours of one token's own row, the token itself left out.

    Example: neighbours_of_token(np.eye(3), 0, k=2)[0].cosine -> 0.0
    """
    table = as_matrix(matrix)
    return nearest_neighbours(table, _row(table, token_id), k=k, exclude=[int(token_id)])


@dataclass(frozen=True)
class Analogy:
    """a − b + c, and the rows nearest to it."""

    query: np.ndarray  # the arithmetic result, on unit-length rows
    neighbours: list[Neighbour]


def analogy(matrix: object, a: int, b: int, c: int, k: int = 5) -> Analogy:
    """Word arithmetic a − b + c (“巴黎 − 法国 + 日本 ≈ 东京”): the nearest rows by cosine.

    As in word2vec's evaluation (3CosAdd), each row is first scaled to length 1 so that a
    frequent, long vector does not dominate, and the three input tokens are excluded
    (otherwise the answer is almost always ``a`` itself).

    Example: analogy(np.eye(4) + 0.1, 0, 1, 2).neighbours[0].token_id -> 3
    """
    table = as_matrix(matrix)
    unit = _unit_rows(table)
    query = _row(unit, a) - _row(unit, b) + _row(unit, c)
    if float(np.linalg.norm(query)) == 0.0:
        raise ValueError("a − b + c is the zero vector here (for example a = b and c is zero); pick other tokens")
    found = nearest_neighbours(unit, query, k=k, exclude=[int(a), int(b), int(c)])
    return Analogy(query=query, neighbours=found)


# --- colouring the map by meaning --------------------------------------------------------


def token_categories(tokens: Sequence[str], category_words: Mapping[str, Sequence[str]]) -> list[str | None]:
    """The semantic category of each vocabulary token, or None (“other”).

    A token matches a word when they are equal after dropping surrounding whitespace
    (" Paris" is the word "Paris"); English also matches case-insensitively ("paris").
    A word listed in two categories keeps the first one given.

    Example: token_categories([" Paris", "的"], {"city": ["Paris", "巴黎"]}) -> ["city", None]
    """
    exact: dict[str, str] = {}
    folded: dict[str, str] = {}
    for category, words in category_words.items():
        for word in words:
            key = str(word).strip()
            if key:
                exact.setdefault(key, category)
                folded.setdefault(key.casefold(), category)
    out: list[str | None] = []
    for token in tokens:
        key = token.strip()
        out.append((exact.get(key) or folded.get(key.casefold())) if key else None)
    return out


def spelling_index(vocab: Sequence[str]) -> dict[str, int]:
    """Token string -> id (the last id of a string listed twice), for repeated ``find_token_id`` calls."""
    return {token: i for i, token in enumerate(vocab)}


def find_token_id(vocab: Sequence[str], word: str, index: Mapping[str, int] | None = None) -> int | None:
    """The id of the token that spells ``word`` on its own, or None.

    Inside an English sentence a word carries its leading space (" Paris"), so that
    spelling is tried first, then the bare word ("巴黎", or "Paris" at a sentence start).
    ``index`` (``spelling_index(vocab)``, made once) saves rebuilding it on every call.

    Example: find_token_id(["<|endoftext|>", "Paris", " Paris"], "Paris") -> 2
    """
    target = str(word).strip()
    if not target:
        return None
    if index is None:
        index = spelling_index(vocab)
    for spelling in (" " + target, target):
        if spelling in index:
            return index[spelling]
    return None


# --- contextual embeddings -------------------------------------------------------------


@dataclass(frozen=True)
class WordSpan:
    """Where a word sits in a tokenized prompt."""

    first: int  # first token position covering the word
    last: int  # last token position covering it: the one whose vector we follow

    @property
    def single_token(self) -> bool:
        return self.first == self.last


def locate_word(ids: Sequence[int], decode: Callable[[list[int]], str], word: str) -> WordSpan:
    """Find the tokens that spell ``word`` (its LAST occurrence) in a tokenized prompt.

    Works from decoded prefixes, so it never assumes one token per character. The last
    occurrence is used because a causal model's vector for a word depends on what came
    before it.

    Example: locate_word([0, 1], lambda ids: "".join("ab"[i] for i in ids), "b") -> WordSpan(first=1, last=1)
    """
    target = str(word).strip()
    if not target:
        raise ValueError("the word to follow is empty")
    ids = [int(i) for i in ids]
    if not ids:
        raise ValueError("the prompt has no tokens")
    # ends[i] = number of characters decoded from tokens 0..i
    ends = [len(decode(ids[: i + 1])) for i in range(len(ids))]
    text = decode(ids)
    start = text.rfind(target)
    if start < 0:
        raise ValueError(f"the word {target!r} does not occur in the prompt")
    stop = start + len(target)
    first = next(i for i, end in enumerate(ends) if end > start)
    last = next((i for i, end in enumerate(ends) if end >= stop), len(ids) - 1)
    return WordSpan(first=first, last=last)


@dataclass(frozen=True)
class StageSimilarity:
    """Cosine between the two prompts' vectors of one word at one point of the model."""

    stage: str  # "embed", "resid_pre", "resid_mid" or "resid_post"
    layer: int | None
    trace_name: str
    cosine: float


def contextual_stages(n_layer: int) -> list[tuple[str, int | None]]:
    """Where the word's vector is read: token embedding, block input, then after each
    attention and each MLP of every layer.

    Example: contextual_stages(1) -> [("embed", None), ("resid_pre", 0), ("resid_mid", 0), ("resid_post", 0)]
    """
    if isinstance(n_layer, bool) or not isinstance(n_layer, int) or n_layer < 1:
        raise ValueError(f"n_layer must be a positive whole number, got {n_layer!r}")
    stages: list[tuple[str, int | None]] = [("embed", None), ("resid_pre", 0)]
    for layer in range(n_layer):
        stages += [("resid_mid", layer), ("resid_post", layer)]
    return stages


def contextual_similarity(
    trace_a: Mapping[str, np.ndarray],
    trace_b: Mapping[str, np.ndarray],
    pos_a: int,
    pos_b: int,
    n_layer: int,
) -> list[StageSimilarity]:
    """Cosine of one word's residual-stream vector in two prompts, stage by stage.

    The token embedding is the same row of the table in both prompts (cosine 1); attention
    then mixes in each prompt's context, and the vectors drift apart.

    Example: contextual_similarity(trace, trace, 2, 2, 4)[-1].cosine -> 1.0
    """
    out: list[StageSimilarity] = []
    for stage, layer in contextual_stages(n_layer):
        name = names.act_name(stage) if layer is None else names.act_name(stage, layer=layer)
        if name not in trace_a or name not in trace_b:
            raise ValueError(f"the trace has no {name!r}; run the model with run_with_trace")
        rows_a, rows_b = np.asarray(trace_a[name]), np.asarray(trace_b[name])
        for pos, rows, label in ((pos_a, rows_a, "first"), (pos_b, rows_b, "second")):
            if not 0 <= pos < rows.shape[0]:
                raise ValueError(f"position {pos} is outside the {label} prompt ({rows.shape[0]} tokens)")
        out.append(StageSimilarity(stage, layer, name, cosine_similarity(rows_a[pos_a], rows_b[pos_b])))
    return out

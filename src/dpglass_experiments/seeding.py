"""Seeding and splits of a sweep: every random choice is addressed by its cell.

* :func:`cell_seed`: the :class:`numpy.random.SeedSequence` of a split
  (dataset, seed) or of a model (dataset, seed, method, epsilon), a node of
  the tree rooted at ``base_seed`` addressed by names and epsilon values (not
  positions in a list), so a cell gives the same row whatever else the sweep
  contains and in whatever order cells are run.
* :func:`split_indices`: a seeded random train/test (or train/validation) split.
* :func:`dataset_split`: a dataset's split for a seed, by its
  :attr:`~dpglass_experiments.specs.DatasetSpec.split` (random, canonical,
  K-fold).
* :func:`cell_key`: the key of a cell's own parameters.
"""

from __future__ import annotations

import math
import zlib

import numpy as np

__all__ = ["cell_seed", "cell_key", "dataset_split", "eps_key", "public_split", "split_indices"]


def _h(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def eps_key(eps) -> str:
    """An epsilon as text (``repr`` of the float; ``"none"`` for a non-private cell)."""
    return "none" if eps is None or (isinstance(eps, float) and math.isnan(eps)) else repr(float(eps))


def cell_seed(base_seed: int, dataset: str, seed: int, method: str | None = None, epsilon=None):
    """The SeedSequence of a split (no method) or of a model (method, epsilon).

    Nodes of the SeedSequence tree rooted at ``base_seed`` are addressed by
    ``spawn_key``: ``(crc32(dataset), seed)`` for the split and
    ``(crc32(dataset), seed, crc32(method), crc32(repr(epsilon)))`` for a
    model, so a cell's streams depend only on its own coordinates.

    Examples
    --------
    >>> a = cell_seed(0, "german-rules", 3, "sm-Laplace", 10.0)
    >>> b = cell_seed(0, "german-rules", 3, "sm-Laplace", 10.0)
    >>> bool((a.generate_state(2) == b.generate_state(2)).all())
    True
    """
    key = (_h(dataset), int(seed))
    if method is not None:
        key += (_h(method), _h(eps_key(epsilon)))
    return np.random.SeedSequence(int(base_seed), spawn_key=key)


def split_indices(n: int, seed_seq, test_size: float = 0.3, holdout: str = "test", validation_size: float = 0.25):
    """``(train, held_out)`` sorted row indices of a seeded split.

    A permutation drawn from ``seed_seq`` puts ``ceil(test_size * n)`` rows in
    the test part and the rest in the training part.  With
    ``holdout="validation"`` the held-out rows are the first
    ``ceil(validation_size * n_train)`` training rows of the permutation and
    the test part is not used at all.
    """
    perm = np.random.default_rng(seed_seq).permutation(n)
    n_test = math.ceil(test_size * n)
    test, train = perm[:n_test], perm[n_test:]
    if holdout == "validation":
        n_val = math.ceil(validation_size * len(train))
        train, test = train[n_val:], train[:n_val]
    return np.sort(train), np.sort(test)


def public_split(config, dataset, seed: int, n_train: int, fraction: float):
    """``(private, public)`` positions in a training part of ``n_train`` rows: ``ceil(fraction * n_train)`` public.

    Drawn from the node ``(dataset, seed, "public")`` of the sweep's seed
    tree, so every method and epsilon of a (dataset, seed) gets the same rows.
    """
    key = (_h(dataset.name), int(seed), _h("public"))
    perm = np.random.default_rng(np.random.SeedSequence(int(config.base_seed), spawn_key=key)).permutation(n_train)
    n_public = math.ceil(fraction * n_train)
    return np.sort(perm[n_public:]), np.sort(perm[:n_public])


def cell_key(dataset: str, epsilon, seed: int | None = None) -> str:
    """The key of :attr:`MethodSpec.cell_params` for a (dataset, epsilon[, seed]) cell.

    Examples
    --------
    >>> cell_key("adult", 0.05), cell_key("mushroom", 1, 3)
    ('adult|0.05', 'mushroom|1.0|3')
    """
    key = f"{dataset}|{eps_key(epsilon)}"
    return key if seed is None else f"{key}|{int(seed)}"


def dataset_split(config, dataset, seed: int, data_home=None):
    """``(train, held_out)`` sorted row indices of ``dataset.load()`` for a seed.

    ``dataset.split`` says how (see :class:`~dpglass_experiments.specs.DatasetSpec`): ``"random"`` is
    :func:`split_indices` (unchanged); ``"canonical"`` is the dataset's own
    train/test split; ``"kfold:K"`` is fold ``seed % K`` of a stratified,
    shuffled K-fold partition seeded by ``(dataset, seed // K)``.  With
    ``config.holdout == "validation"``, the held-out rows of the last two are
    ``ceil(validation_size * n_train)`` training rows drawn by the seed's
    permutation, and the test rows are not used at all.
    """
    X, y, _ = dataset.load(data_home)
    if dataset.split == "random":
        return split_indices(
            len(y), cell_seed(config.base_seed, dataset.name, seed), config.test_size, config.holdout,
            config.validation_size,
        )
    if dataset.split == "canonical":
        n_tr = dataset.n_train(data_home)
        train, test = np.arange(n_tr), np.arange(n_tr, len(y))
    else:
        from sklearn.model_selection import StratifiedKFold

        k = dataset.n_folds
        repeat, fold = divmod(int(seed), k)
        partition = np.random.SeedSequence(int(config.base_seed), spawn_key=(_h(dataset.name), repeat, _h("kfold")))
        folds = StratifiedKFold(n_splits=k, shuffle=True, random_state=int(partition.generate_state(1)[0]))
        train, test = list(folds.split(np.zeros(len(y)), y))[fold]
    if config.holdout == "validation":
        perm = np.random.default_rng(cell_seed(config.base_seed, dataset.name, seed)).permutation(len(train))
        n_val = math.ceil(config.validation_size * len(train))
        train, test = train[perm[n_val:]], train[perm[:n_val]]
    return np.sort(train), np.sort(test)


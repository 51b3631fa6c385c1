import numpy as np
import pytest

from dpglass.exceptions import InvalidParameterError
from dpglass.privacy.rng import check_random_state, spawn


def test_int_is_reproducible_and_none_is_not():
    assert check_random_state(3).random() == check_random_state(3).random()
    assert check_random_state(None).random() != check_random_state(None).random()


def test_generator_passes_through_and_seedsequence_works():
    g = np.random.default_rng(0)
    assert check_random_state(g) is g
    ss = np.random.SeedSequence(5)
    assert check_random_state(ss).random() == np.random.default_rng(np.random.SeedSequence(5)).random()


@pytest.mark.parametrize("bad", [-1, 1.5, "0", True, np.random.RandomState(0)])
def test_rejects_other_types(bad):
    with pytest.raises(InvalidParameterError, match="random_state"):
        check_random_state(bad)


def test_spawn_children_are_independent():
    a, b = spawn(check_random_state(0), 2)
    assert a.random() != b.random()
    a2, _ = spawn(check_random_state(0), 2)
    assert a2.random() == check_random_state(0).spawn(1)[0].random()

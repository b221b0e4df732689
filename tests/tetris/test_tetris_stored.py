"""The stored Tetris instances are exactly what today's generator makes (they cannot drift again)."""

import re

import pytest
from placement.instances import stored, stored_path, tetris_document

from placement.io import read_document
from placement.tetris import load_instance

NAME = re.compile(r"t(\d+)-j(\d+)-r(\d+)-s(\d+)\.json")


def test_stored_instances_exist_and_are_named_by_their_generator_arguments():
    names = stored("tetris")
    assert len(names) >= 5
    assert all(NAME.fullmatch(n) for n in names), names


@pytest.mark.parametrize("name", stored("tetris"))
def test_stored_instance_equals_todays_generator(name):
    T, J, R, s = map(int, NAME.fullmatch(name).groups())
    doc = read_document(str(stored_path("tetris", name)))
    assert doc == tetris_document(T, J, R, seed=s, name=name.removesuffix(".json"))
    inst = load_instance(doc)
    assert (inst.n_tables, inst.n_jobs, inst.n_regions) == (T, J, R)

"""``recorded_links``: a run's recorded ``agent`` rule read back from summary.json (CASSINI §4.2 step 3)."""

import pytest

from placement.app.run import recorded_links
from placement.errors import InstanceError


@pytest.mark.parametrize("value", [1, 0, "yes", [True], {"all": True}, None])
def test_anything_but_true_false_or_all_is_refused_naming_the_field(value):
    with pytest.raises(InstanceError, match=r"run\.agent"):
        recorded_links(None, {"agent": value})


def test_no_agent_recorded_means_the_default_model():
    assert recorded_links(None, {}) is None
    assert recorded_links(None, {"agent": False}) is None

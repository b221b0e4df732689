import pytest

from placement.cassini.topology import testbed_topology as paper_testbed
from placement.sim.network import network_from_doc

TESTBED = {"racks": 12, "servers_per_rack": 2, "gpus_per_server": 1, "server_capacity": 50,
           "oversubscription": 2}


def test_testbed_spec_builds_the_paper_testbed():
    t = network_from_doc(TESTBED)
    ref = paper_testbed()
    assert (t.servers, t.switches, t.links) == (ref.servers, ref.switches, ref.links)
    caps = {lk.name: lk.capacity for lk in t.links}
    assert caps["s0-tor0"] == 50.0 and caps["tor0-core"] == 50.0


@pytest.mark.parametrize("field,value", [("server_capacity", -50), ("racks", 0),
                                         ("oversubscription", 0)])
def test_bad_values_name_the_field(field, value):
    with pytest.raises(ValueError, match=f"network.{field}"):
        network_from_doc({**TESTBED, field: value})


def test_unknown_key_named():
    with pytest.raises(ValueError, match="uplink"):
        network_from_doc({**TESTBED, "uplink": 5})

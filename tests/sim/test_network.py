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


def test_shipped_testbed_cluster_carries_the_network():
    from placement.sim.cluster_io import cluster_from_doc, cluster_to_doc, load_cluster_spec

    c = load_cluster_spec("instances/clusters/cassini-testbed.json")
    assert c.n_gpus == 24 and c.n_machines == 24 and len(c.rack_names) == 12
    t, ref = c.topology(), paper_testbed()
    assert (t.servers, t.links) == (ref.servers, ref.links)
    back = cluster_from_doc(cluster_to_doc(c))
    assert back.network == c.network and back.machine_names == c.machine_names


def test_cluster_without_network_has_no_topology():
    from placement.sim.cluster import Cluster

    c = Cluster.uniform(1, 1, 2, 2, 1)
    assert c.network is None and c.topology() is None


@pytest.mark.parametrize("net,field", [({**TESTBED, "server_capacity": -1}, "network.server_capacity"),
                                       ({**TESTBED, "racks": 6}, "network"),
                                       ({**TESTBED, "gpus_per_server": 2}, "network.gpus_per_server"),
                                       ({**TESTBED, "link": 1}, "link")])
def test_bad_network_in_a_cluster_spec_names_the_field(net, field):
    import json

    from placement.sim.cluster_io import cluster_from_doc

    doc = json.load(open("instances/clusters/cassini-testbed.json"))
    doc["network"] = net
    with pytest.raises(ValueError, match=field) as e:
        cluster_from_doc(doc)
    assert "\n" not in str(e.value)


def _dp(name):
    from placement.cassini.profiles import synthetic_profile

    return synthetic_profile("data_parallel", name, 180, comm_fraction=0.5, bandwidth=50)


def test_alone_runs_at_profile_rate():
    from placement.sim.network import iteration_times

    assert iteration_times(paper_testbed(), {"a": (_dp("a"), ("s0", "s2"), 0.0)}) == {"a": 180.0}


@pytest.mark.parametrize("shift,expect", [(0.0, 90 + 90 * 50 / 25), (90.0, 180.0)])
def test_two_line_rate_jobs_on_one_uplink(shift, expect):
    # both cross tor0-core (50 Gbps) at 50 Gbps for half of a 180 ms iteration: started together the
    # communication phases overlap and each gets 25 Gbps (90 ms compute + 180 ms comm); shifted by
    # the communication phase they interleave and each runs at its ideal 180 ms (CASSINI §2).
    from placement.sim.network import iteration_times

    got = iteration_times(paper_testbed(), {"a": (_dp("a"), ("s0", "s2"), 0.0),
                                            "b": (_dp("b"), ("s1", "s3"), shift)})
    assert got == pytest.approx({"a": expect, "b": expect}, rel=1e-6)


def test_shipped_6x4_testbed_reading_is_the_tree_of_6_racks_of_4():
    from placement.cassini.topology import tree_topology
    from placement.sim.cluster_io import load_cluster_spec

    c = load_cluster_spec("instances/clusters/cassini-testbed-6x4.json")
    t, want = c.topology(), tree_topology(pods=1, tors_per_pod=6, servers_per_tor=4, server_capacity=50.0,
                                          oversubscription=2.0)
    assert t.servers == want.servers and t.links == want.links and len(set(c.rack_names)) == 6
    assert t.capacity["tor0-core"] == 100.0


def test_clos_reading_of_the_testbed_matches_the_paper_counts_and_routes_by_ecmp():
    from placement.cassini.topology import testbed_clos_topology
    from placement.sim.cluster_io import load_cluster_spec

    t = testbed_clos_topology()
    assert (len(t.switches), len(t.links), len(t.servers)) == (13, 48, 24)
    assert set(t.capacity.values()) == {50.0} and len(t.capacity) == 2 * 48   # one id per direction
    # a flow between racks of one pod goes up one of the two aggregation switches, the same way every time
    up = [lk for lk in t.route("s0", "s4") if lk.startswith("tor0-")]
    assert len(up) == 1 and up[0] in ("tor0-agg0>", "tor0-agg1>") and t.route("s0", "s4") == t.route("s0", "s4")
    # across pods: ToR -> agg -> core -> agg -> ToR, and both uplinks of a rack carry some flows
    assert len(t.route("s0", "s12")) == 6
    ups = {lk for b in range(12, 24) for lk in t.route("s0", f"s{b}") if lk.startswith("tor0-")}
    assert ups == {"tor0-agg0>", "tor0-agg1>"}
    c = load_cluster_spec("instances/clusters/cassini-testbed-clos.json")
    ct = c.topology()
    assert (ct.servers, ct.links) == (t.servers, t.links)


@pytest.mark.parametrize("net,field", [({"kind": "fat", "racks": 6, "servers_per_rack": 4, "server_capacity": 50},
                                        "network.kind"),
                                       ({"kind": "clos", "racks": 6, "servers_per_rack": 4, "server_capacity": 50,
                                         "racks_per_pod": 4}, "network.racks_per_pod"),
                                       ({"kind": "clos", "racks": 6, "servers_per_rack": 4, "server_capacity": 50,
                                         "oversubscription": 2}, "oversubscription")])
def test_bad_clos_sections_name_the_field(net, field):
    with pytest.raises(ValueError, match=field):
        network_from_doc(net)

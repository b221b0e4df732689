"""YARN-CS (HiveD §5.1's quota baseline): idle GPUs first, best fit, preemption only for affinity.

§5.1: "YARN-CS is a modified YARN Capacity Scheduler. It packs jobs as close as possible to
spare good GPU affinity [...] instead of preempting the latest jobs, it preempts low-priority
jobs based on the desired GPU affinity requirement." A within-quota job takes idle GPUs with its
affinity (one machine up to 8 GPUs, else whole machines), the machine with the fewest idle GPUs
that suffice; only when no machine has enough idle GPUs does it preempt low-priority jobs, the
whole jobs of the fewest GPUs that give it the affinity on one machine (above a node: whole
machines with the fewest low-priority GPUs). Everything else is
:class:`placement.solvers.online.quota.QuotaSharing` (``rule="idle-first"``; ``quota`` keeps HiveD's
fewest-low-priority-GPUs rule as the named variant). Difference: YARN-CS's code is not public;
the rule is the paper's sentence above.
"""

from __future__ import annotations

from placement.solvers.online.quota import QuotaSharing

__all__ = ["YarnCS"]


class YarnCS(QuotaSharing):
    """YARN-CS: per-tenant quotas; within-quota jobs on idle GPUs first, best fit, preempting only for affinity.

    Options as :class:`~placement.solvers.online.quota.QuotaSharing`."""

    name = "yarn-cs"
    rule = "idle-first"

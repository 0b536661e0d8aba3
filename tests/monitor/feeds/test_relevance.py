from __future__ import annotations

import pytest

from monitor.feeds.model import Incident
from monitor.feeds.relevance import Interest, is_relevant


def incident(regions: tuple[str, ...] = (), components: tuple[str, ...] = ()) -> Incident:
    return Incident(
        "gcp", "1", "t", "investigating", "minor", False, None, None, None, components, regions
    )


@pytest.mark.parametrize(
    ("regions", "components", "interest", "relevant"),
    [
        pytest.param((), (), Interest(), True, id="no-interest-means-everything"),
        pytest.param(("us-east-1",), (), Interest.of(["us-east-1"], []), True, id="region-match"),
        pytest.param(("eu-west-1",), (), Interest.of(["us-east-1"], []), False, id="other-region"),
        pytest.param(("US-EAST-1",), (), Interest.of(["us-east-1"], []), True, id="case-blind"),
        pytest.param(("global",), (), Interest.of(["us-east-1"], []), True, id="global-counts"),
        pytest.param((), (), Interest.of(["us-east-1"], []), True, id="no-region-not-ruled-out"),
        pytest.param(
            (),
            ("Google Compute Engine",),
            Interest.of([], ["compute engine"]),
            True,
            id="component-substring",
        ),
        pytest.param(
            (), ("Cloud Storage",), Interest.of([], ["compute engine"]), False, id="other-component"
        ),
        pytest.param(
            ("eu-west-1",),
            ("Amazon EC2",),
            Interest.of(["us-east-1"], ["ec2"]),
            True,
            id="component-match-beats-region-miss",
        ),
    ],
)
def test_relevance(
    regions: tuple[str, ...], components: tuple[str, ...], interest: Interest, relevant: bool
) -> None:
    assert is_relevant(incident(regions, components), interest) is relevant
